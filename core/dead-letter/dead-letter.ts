/**
 * Dead letters. A job that fails for good, with a dead-letter queue named by its `opts.deadLetter` (or
 * else by the Worker's `deadLetter` option), is copied to that queue by the very ack that fails it, in
 * the same script call. The original stays in `failed` (or goes, per `removeOnFail`); the copy is an
 * ordinary BullMQ job of the dead-letter queue, waiting, with `added` and `waiting` events and the
 * ready marker, so any BullMQ or nimbusq worker (or an alert) can take it:
 *
 * - id `dl:<source>:<jobId>`, BullMQ's three-segment custom-id form: `<source>` is the source queue's
 *   name (`<prefix>:<name>` when the dead-letter queue has another prefix) and both parts have `%`
 *   and `:` percent-encoded, so the id is valid whatever the job id (`repeat:<id>:<ms>` included) and
 *   names the job it came from. A dead letter that already exists is left alone (`duplicated`).
 * - name: the failed job's name, so a dead-letter worker can dispatch on it.
 * - data: `{ job: { id, name, queue, prefix, timestamp, attemptsStarted, opts, data }, failedReason,
 *   stacktrace, attemptsMade }` ({@link DeadLetterData}): the failed job's data is nested, never
 *   spread, so data of any JSON type (a string, an array, an object with a `failedReason` key) comes
 *   back exactly as stored, and the job's fields cannot collide with the failure's.
 * - opts `{"attempts":0}`; timestamp: when it failed (the original's `finishedOn`).
 *
 * A BullMQ Worker that fails a job with `opts.deadLetter` ignores the option: only nimbusq's Worker
 * writes dead letters. `redrive` (core/dead-letter/redrive.ts) moves them back to their source queue. When the
 * source queue's prefix carries a Redis Cluster hash tag, the target's must carry the same: refused
 * when configured (core/redis/hash-slot.ts); a foreign job's option that does not is ignored.
 */

import type { AckEntry } from "../job/ack-entry.ts";
import type { ActiveJob } from "../job/active-job.ts";
import { encodeOptions } from "../redis/codec.ts";
import { checkDeadLetterSlot, requiredTag } from "../redis/hash-slot.ts";
import { queueKeyPrefix, queueQualifiedName } from "../redis/keys.ts";
import { queueNameProblem } from "../redis/names.ts";
import type { ShardMap } from "../redis/shard-map.ts";
import type { DeadLetterOptions, JobsOptions } from "../types.ts";
import { type Checker, checkDeadLetter } from "../validate.ts";

/** What a dead letter's `data` holds. */
export interface DeadLetterData<TData = unknown> {
  job: {
    id: string;
    name: string;
    /** The source queue's name and key prefix. */
    queue: string;
    prefix: string;
    timestamp: number;
    attemptsStarted: number;
    /** The job's options, with their public names (as `job.opts`). */
    opts: Record<string, unknown>;
    /** The job's data, as stored. */
    data: TData;
  };
  failedReason: string;
  stacktrace: string[];
  attemptsMade: number;
}

/** The ack entry's dead-letter fields: `deadLetter` is the dead-letter queue's key prefix, or "". */
export type DeadLetterFields = Pick<
  AckEntry,
  "deadLetter" | "deadLetterId" | "deadLetterName" | "deadLetterData" | "deadLetterOpts"
>;

export const noDeadLetter: DeadLetterFields = {
  deadLetter: "",
  deadLetterId: "",
  deadLetterName: "",
  deadLetterData: "",
  deadLetterOpts: "",
};

const encodePart = (text: string): string => text.replaceAll("%", "%25").replaceAll(":", "%3A");

/** `dl:<source>:`, what every dead letter of one source queue's id starts with. */
export function deadLetterIdPrefix(
  source: { prefix: string; queue: string },
  deadLetterPrefix: string,
): string {
  const name =
    source.prefix === deadLetterPrefix ? source.queue : queueQualifiedName(source.prefix, source.queue);
  return `dl:${encodePart(name)}:`;
}

/** The dead letter's id: `dl:<source>:<jobId>`, with `%` and `:` percent-encoded in both parts. */
export function deadLetterId(
  source: { prefix: string; queue: string },
  deadLetterPrefix: string,
  jobId: string,
) {
  return deadLetterIdPrefix(source, deadLetterPrefix) + encodePart(jobId);
}

/**
 * The Worker's `deadLetter` option: valid, not the worker's own queue, and in the worker queue's Redis
 * Cluster hash slot when that queue's prefix carries a hash tag (core/redis/hash-slot.ts).
 */
export function checkWorkerDeadLetter(
  check: Checker,
  value: unknown,
  queue: string,
  prefix: string,
  shards?: ShardMap,
): void {
  if (value === undefined) return;
  const option = checkDeadLetter(check, "deadLetter", value);
  if (option.queue === queue && (option.prefix ?? prefix) === prefix)
    check.fail("deadLetter.queue", "another queue than the worker's own", option.queue);
  checkDeadLetterSlot(check, "deadLetter.prefix", { prefix, queueName: queue }, option);
  shards?.checkSameDatabase(check, "deadLetter.queue", queue, option.queue);
}

/** The failure an ack writes: the reason, the stacktrace JSON array and the new attemptsMade. */
export interface Failure {
  value: string;
  stacktrace: string;
  attemptsMade: number;
}

/** The dead letter of a job failing for good, or {@link noDeadLetter} when it has no dead-letter queue. */
export function deadLetterFields(
  job: ActiveJob,
  failure: Failure,
  fallback: DeadLetterOptions | undefined,
): DeadLetterFields {
  const target = (job.opts.deadLetter as DeadLetterOptions | undefined) ?? fallback;
  // A foreign producer's malformed option makes no dead letter rather than failing the whole ack; so
  // does a target outside the source's cluster hash slot, which would stop the ack's script half-way.
  if (typeof target?.queue !== "string" || queueNameProblem(target.queue) !== undefined) return noDeadLetter;
  if (target.prefix !== undefined && (typeof target.prefix !== "string" || target.prefix === ""))
    return noDeadLetter;
  const source = { prefix: job.context.prefix, queue: job.queueName };
  const prefix = target.prefix ?? source.prefix;
  const sourceKeyPrefix = queueKeyPrefix(source.prefix, source.queue);
  if (requiredTag(sourceKeyPrefix, queueKeyPrefix(prefix, target.queue)) !== undefined) return noDeadLetter;
  // So does one on another database of a shard map: the ack would create the queue on this one.
  const shards = job.context.shards;
  if (shards && shards.databaseOf(target.queue) !== shards.databaseOf(source.queue)) return noDeadLetter;
  // Everything but the data is re-serialized; the data is spliced in as stored (a processor may have
  // changed `job.data` in memory without storing it).
  const head = JSON.stringify({
    id: job.id,
    name: job.name,
    queue: source.queue,
    prefix: source.prefix,
    timestamp: job.timestamp,
    attemptsStarted: job.attemptsStarted,
    opts: job.opts,
  });
  const data = job.storedData ?? JSON.stringify(job.data ?? {});
  const jobText = `${head.slice(0, -1)},"data":${data}}`;
  return {
    deadLetter: queueKeyPrefix(prefix, target.queue),
    deadLetterId: deadLetterId(source, prefix, job.id),
    deadLetterName: job.name,
    deadLetterData: `{"job":${jobText},"failedReason":${JSON.stringify(failure.value)},"stacktrace":${failure.stacktrace || "[]"},"attemptsMade":${failure.attemptsMade}}`,
    deadLetterOpts: encodeOptions({}),
  };
}

/** Options a redriven job does not carry over: its id, its timing, its parent and its dedup window. */
const notRedriven = [
  "jobId",
  "delay",
  "timestamp",
  "parent",
  "deduplication",
  "repeat",
  "repeatJobKey",
  "prevMillis",
  "failParentOnFailure",
  "continueParentOnFailure",
  "ignoreDependencyOnFailure",
  "removeDependencyOnFailure",
];

/** The options of the job a dead letter becomes again: the original's, as a fresh standalone job. */
export function redriveOptions(opts: Record<string, unknown>): JobsOptions {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) if (!notRedriven.includes(key)) kept[key] = value;
  return kept as JobsOptions;
}

/** A dead letter's data, or undefined when it is not one this module wrote. */
export function parseDeadLetter(text: string | undefined): DeadLetterData | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<DeadLetterData> | null;
    const job = parsed?.job;
    if (!job || typeof job.name !== "string" || typeof job.opts !== "object" || job.opts === null)
      return undefined;
    return parsed as DeadLetterData;
  } catch {
    return undefined;
  }
}
