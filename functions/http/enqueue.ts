/**
 * `POST /queues/:queue/jobs`: one job `{ name, data, opts }` or an array of up to 1,000, written in
 * one atomic add. An `Idempotency-Key` header becomes the job id (`<key>-<index>` for an array), so a
 * client that retries a request gets the jobs it already made back as `duplicated`; the same key with
 * another body answers 422 (idempotency.ts).
 */
import type { Hono } from "hono";
import {
  type AddedJob,
  type BulkJob,
  Job,
  type JobState,
  type JobsOptions,
  ParentConflictError,
  ParentNotFoundError,
  ValidationError,
} from "../../core/index.ts";
import { Checker, checkJobId } from "../../core/internal.ts";
import { asHttpError, HttpError, invalid } from "./http-errors.ts";
import { checkAfterAdd, checkBeforeAdd, keyHeader } from "./idempotency.ts";
import { stateOfCreatedJob } from "./job-view.ts";
import type { AppEnv, QueueAccess } from "./queue-access.ts";
import { readJsonBody } from "./request-body.ts";

/** Most jobs one request may add (one addJobs call). */
export const maxJobsPerRequest = 1000;

const jobFields = ["name", "data", "opts"];

/** The job id an Idempotency-Key gives the job at `index` (undefined for a single job). */
function idFromKey(key: string, index: number | undefined): string {
  const id = index === undefined ? key : `${key}-${index}`;
  try {
    checkJobId(new Checker(keyHeader), keyHeader, id);
  } catch (error) {
    if (error instanceof ValidationError)
      // The header is not quoted back: no answer echoes a raw header value.
      throw invalid(
        keyHeader,
        `${keyHeader} must make a valid job id: ${error.rule.replace(/, got .*$/s, "")}`,
      );
    throw error;
  }
  return id;
}

/** Checks the body's shape (core checks the values) and applies the Idempotency-Key. */
function jobsFromBody(body: unknown, key: string | undefined): { jobs: BulkJob[]; many: boolean } {
  const many = Array.isArray(body);
  const items: unknown[] = many ? body : [body];
  if (items.length === 0 || items.length > maxJobsPerRequest) {
    throw invalid("body", `the body must be one job or an array of 1 to ${maxJobsPerRequest} jobs`);
  }
  const jobs = items.map((item, i): BulkJob => {
    const at = (field: string) => (many ? `[${i}].${field}` : field);
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw invalid(many ? `[${i}]` : "body", "a job must be an object { name, data, opts }");
    const fields = item as Record<string, unknown>;
    for (const field of Object.keys(fields)) {
      if (!jobFields.includes(field))
        throw invalid(at(field), `unknown field "${field}": a job has name, data, opts`);
    }
    if (typeof fields.name !== "string") throw invalid(at("name"), `${at("name")} must be a string`);
    const opts = fields.opts;
    if (opts !== undefined && (typeof opts !== "object" || opts === null || Array.isArray(opts)))
      throw invalid(at("opts"), `${at("opts")} must be an object`);
    const options: JobsOptions = { ...(opts as JobsOptions | undefined) };
    if (key !== undefined) {
      const id = idFromKey(key, many ? i : undefined);
      if (options.jobId !== undefined && options.jobId !== id)
        throw invalid(keyHeader, `${keyHeader} conflicts with ${at("opts.jobId")}`);
      options.jobId = id;
    }
    return { name: fields.name, data: fields.data, opts: options };
  });
  return { jobs, many };
}

/** Core names a bulk's fields `jobs[i].…` (and a lone job's without index); the body's are `[i].…`. */
function bodyField(field: string, many: boolean): string {
  if (!many) return field;
  return field.startsWith("jobs[") ? field.slice("jobs".length) : `[0].${field}`;
}

/** States after the add: known for created jobs, looked up (in one call) for the others. */
async function statesAfterAdd(added: AddedJob[]): Promise<JobState[]> {
  const looked = await Job.getStates(added.filter((a) => a.outcome !== "created").map((a) => a.job));
  let next = 0;
  return added.map((a) =>
    a.outcome === "created" ? stateOfCreatedJob(a.job) : (looked[next++] as JobState),
  );
}

export function addEnqueueRoute(app: Hono<AppEnv>, access: QueueAccess): void {
  app.post("/queues/:queue/jobs", async (c) => {
    const queue = access.queue(c);
    const body = await readJsonBody(c.req.raw, access.settings.maxBodyBytes, true);
    const key = c.req.header(keyHeader);
    const { jobs, many } = jobsFromBody(body, key);
    let added: AddedJob[];
    try {
      const checked = key === undefined ? undefined : await checkBeforeAdd(queue, jobs, many);
      added = await queue.addBulkWithOutcomes(jobs);
      if (checked) await checkAfterAdd(queue, jobs, many, added, checked);
    } catch (error) {
      if (error instanceof ValidationError) {
        const field = bodyField(error.field, many);
        throw invalid(field, `${field} must be ${error.rule}`);
      }
      const known = asHttpError(error);
      if (known && !many && (error instanceof ParentNotFoundError || error instanceof ParentConflictError))
        throw new HttpError(known.status, known.code, known.message, "opts.parent");
      throw error;
    }
    const states = await statesAfterAdd(added);
    const results = added.map(({ job, outcome }, i) => ({ id: job.id, state: states[i], outcome }));
    const ready = added.some(
      (a, i) => a.outcome === "created" && (states[i] === "waiting" || states[i] === "prioritized"),
    );
    // Awaited: on Lambda, work left running after the answer is frozen with the function.
    if (ready) await access.kick(queue.name);
    else {
      // A delayed job due before the sweeper's next tick: the worker can wait for it.
      const dueSoon = added
        .filter((a, i) => a.outcome === "created" && states[i] === "delayed")
        .map(({ job }) => job.timestamp + job.delay)
        .filter((due) => due <= Date.now() + 60_000);
      if (dueSoon.length > 0) await access.kick(queue.name, { wakeAt: Math.min(...dueSoon) });
    }
    if (many) return c.json({ jobs: results }, 202);
    const [result] = results as [(typeof results)[number]];
    const location = `/queues/${encodeURIComponent(queue.name)}/jobs/${encodeURIComponent(result.id)}`;
    return c.json(result, 202, { Location: location });
  });
}
