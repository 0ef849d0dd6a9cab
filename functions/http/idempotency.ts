/**
 * An `Idempotency-Key` reused with another request answers 422 (as Stripe does) instead of handing
 * back jobs the request did not describe. A request is compared with the jobs its key names by a
 * canonical fingerprint of each job: name, data and the options core would store (defaults merged),
 * object keys sorted so key order alone never makes two requests differ.
 *
 * The check reads before the add: the add script writes even for a job that exists (a `duplicated`
 * event, a replay guard), so a refusal found afterwards would already have changed the keyspace, and
 * core's job options hold no field of our own to carry a digest (BullMQ ignores unknown options, but
 * core refuses them, so that typos never pass silently). Requests without the header pay nothing;
 * with it, one read (a hash read for one job, one state script for an array) and, only on a retry,
 * one hash read per job that exists. A concurrent twin that creates the jobs between that read and
 * the add is caught after the add, by the jobs it reports `duplicated`.
 */

import { type AddedJob, type BulkJob, Job, type Queue } from "../../core/index.ts";
import { decodeOptions, encodeOptions } from "../../core/internal.ts";
import { errorCodes, HttpError } from "./http-errors.ts";

export const keyHeader = "Idempotency-Key";

function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

/** What a job was asked to be: the same text for the same request, whatever its key order. */
export function fingerprint(job: Pick<Job, "name" | "data" | "opts">): string {
  return JSON.stringify({ name: job.name, data: job.data, opts: job.opts }, sortedKeys);
}

function reused(): HttpError {
  return new HttpError(
    422,
    errorCodes.idempotencyKeyReused,
    `this ${keyHeader} was already used with another request: send a new key for a new request`,
    keyHeader,
  );
}

/** The request's jobs as core would store them (each carries its id from the key). */
function askedJobs(queue: Queue, jobs: BulkJob[], many: boolean): Job[] {
  const now = Date.now();
  return jobs.map((input, i) => {
    const prepared = queue.prepare(input.name, input.data, input.opts, many ? `jobs[${i}].` : "", now);
    const job = queue.jobFromNew(prepared, prepared.customId);
    // As stored and read back (BullMQ's `attempts: 0`, a numeric backoff expanded, …).
    job.opts = decodeOptions(encodeOptions(prepared.opts)) as typeof job.opts;
    return job;
  });
}

async function compare(queue: Queue, asked: Job): Promise<void> {
  const stored = await queue.getJob(asked.id);
  if (stored && fingerprint(stored) !== fingerprint(asked)) throw reused();
}

/**
 * Before the add: refuses (422) when a job the key names exists with other contents. Returns the
 * ids it found and compared, for `checkAfterAdd`. Throws core's ValidationError for a bad job, as
 * the add would.
 */
export async function checkBeforeAdd(queue: Queue, jobs: BulkJob[], many: boolean): Promise<Set<string>> {
  const asked = askedJobs(queue, jobs, many);
  let existing = asked;
  if (asked.length > 1) {
    const states = await Job.getStates(asked);
    existing = asked.filter((_, i) => states[i] !== "unknown");
  }
  await Promise.all(existing.map((job) => compare(queue, job)));
  return new Set(existing.map((job) => job.id));
}

/** After the add: the jobs reported `duplicated` that the first check did not see (a concurrent twin). */
export async function checkAfterAdd(
  queue: Queue,
  jobs: BulkJob[],
  many: boolean,
  added: AddedJob[],
  checked: Set<string>,
): Promise<void> {
  const late = added.map((a, i) => (a.outcome === "duplicated" && !checked.has(a.job.id) ? i : -1));
  const indices = late.filter((i) => i >= 0);
  if (indices.length === 0) return;
  const asked = askedJobs(queue, jobs, many);
  await Promise.all(indices.map((i) => compare(queue, asked[i] as Job)));
}
