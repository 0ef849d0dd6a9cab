/**
 * How an add is cut into script calls, shared by the one-call path (core/adds/add-jobs.ts) and the staged
 * path (core/adds/staged-add.ts): the queues a batch touches, each job's script arguments, chunks that keep
 * a call within Upstash's request limit and within the 20 ms a script may hold Redis, and the errors
 * the add scripts answer.
 */

import { errorForCode, QueueError } from "../errors.ts";
import { encodeOptions, parentField } from "../redis/codec.ts";
import { scriptCodes } from "../redis/generated/scripts.ts";
import { queueKeyPrefix, queueQualifiedName } from "../redis/keys.ts";
import { requestLimitBytes } from "../redis/redis-port.ts";
import { flag } from "../redis/scripts.ts";
import type { NewJob } from "./add-types.ts";

/**
 * How much work one script call may take on: a call must hold Redis at most 20 ms and stay under
 * Upstash's 10 MB request. A job costs one unit per 512 bytes of data (at least one), and a call
 * takes at most 1,000 units: 1,000 jobs of up to 512 bytes, 500 of 1 KB, one of 512 KB. Measured
 * with SLOWLOG (test/bench/big-add.ts, on a busy 2-core machine): 1,000 small jobs or 500 of 1 KB
 * hold Redis 8–20 ms in one addJobs call, 2 MB of data about 12 ms.
 */
export const maxUnitsPerCall = 1000;
/**
 * A staged add's calls take half as much: it has many of them and none needs to hold the whole add,
 * so each keeps a margin under 20 ms on a busy Redis (its median stageJobs call of 250 jobs of 1 KB
 * measured 5–8 ms).
 */
export const maxUnitsPerStagingCall = 500;
// Data may triple in the request body (UTF-8, quotes escaped again); the rest of a job is small.
const maxBytesPerCall = Math.floor(requestLimitBytes * 0.8);

function units(job: NewJob): number {
  return Math.max(1, job.dataText.length / 512);
}

function estimatedBytes(job: NewJob): number {
  return job.dataText.length * 3 + 1024;
}

/** Consecutive runs of jobs that each fit one call (work units and estimated request bytes). */
export function chunks(jobs: NewJob[], maxUnits = maxUnitsPerCall): NewJob[][] {
  const out: NewJob[][] = [];
  let current: NewJob[] = [];
  let work = 0;
  let bytes = 0;
  for (const job of jobs) {
    const cost = units(job);
    const size = estimatedBytes(job);
    if (current.length > 0 && (work + cost > maxUnits || bytes + size > maxBytesPerCall)) {
      out.push(current);
      current = [];
      work = 0;
      bytes = 0;
    }
    current.push(job);
    work += cost;
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** The distinct queues of a batch, numbered from 1 in order of first appearance (the scripts' KEYS groups). */
export interface QueueTable {
  queues: { prefix: string; queueName: string }[];
  indexOf(job: NewJob): number;
}

export function queueTable(jobs: NewJob[]): QueueTable {
  const index = new Map<string, number>();
  const queues: QueueTable["queues"] = [];
  for (const job of jobs) {
    const qualified = queueQualifiedName(job.prefix, job.queueName);
    if (!index.has(qualified)) {
      index.set(qualified, queues.length + 1);
      queues.push({ prefix: job.prefix, queueName: job.queueName });
    }
  }
  return {
    queues,
    indexOf: (job) => index.get(queueQualifiedName(job.prefix, job.queueName)) as number,
  };
}

/** The full key of a job's hash when its id is known now (a custom or generated id), else undefined. */
export function knownJobKey(job: NewJob): string | undefined {
  return job.customId ? queueKeyPrefix(job.prefix, job.queueName) + job.customId : undefined;
}

/** One job as the addJobs and stageJobs scripts take it (their `jobs` ARGV group). */
export function jobArgs(job: NewJob, queue: number) {
  const parent = job.opts.parent;
  const dedup = job.opts.deduplication;
  const parentPrefix = parent ? `${parent.queue}:` : "";
  return {
    queue,
    customId: job.customId,
    generatedId: flag(job.generatedId),
    name: job.name,
    data: job.dataText,
    opts: encodeOptions(job.opts),
    timestamp: job.timestamp,
    delay: job.opts.delay ?? 0,
    priority: job.opts.priority ?? 0,
    placement: job.placement,
    parentKey: parent ? parentPrefix + parent.id : "",
    parentField: parent ? parentField(parent.id, parent.queue, job.opts) : "",
    parentPrefix,
    dedupId: dedup?.id ?? "",
    dedupTtl: dedup?.ttl ?? 0,
    dedupExtend: flag(dedup?.extend),
    dedupReplace: flag(dedup?.replace),
    repeatJobKey: job.repeatJobKey ?? "",
    group: job.opts.group?.id ?? "",
  };
}

/** The add scripts' `events` argument for a queue's events level: 2 all, 1 final, 0 none. */
export function eventsLevel(events: "all" | "final" | "none"): number {
  return events === "all" ? 2 : events === "final" ? 1 : 0;
}

export function subject(job: NewJob | undefined): string {
  if (!job) return "a job";
  return `job ${job.customId ? `"${job.customId}"` : "(new)"} "${job.name}" in queue "${job.queueName}"`;
}

/**
 * A custom job id is held by another add that is staging it (an add of more than one call) and has
 * not committed: the job is not there yet, and may never be if that add fails. Retry after a moment;
 * an abandoned staging frees its ids when it expires (`replayGuardTtlMs`, 10 minutes by default).
 */
export class JobIdInFlightError extends QueueError {
  override name = "JobIdInFlightError" as const;
}

/**
 * An add of more than one call could not commit: its staging expired or was removed before the
 * commit (`replayGuardTtlMs` is how long a staging lives). Nothing of it was added.
 */
export class StagedAddExpiredError extends QueueError {
  override name = "StagedAddExpiredError" as const;
}

/** The typed error for a code of an add script: its own (stagingGone, idInFlight) or a shared one. */
export function addError(code: number, job: NewJob | undefined): QueueError {
  if (code === scriptCodes.idInFlight) {
    return new JobIdInFlightError(
      `add: ${subject(job)} is being added by another add that has not committed; retry later`,
    );
  }
  if (code === scriptCodes.stagingGone) {
    return new StagedAddExpiredError(
      "add: the staged add expired or was removed before its commit; nothing was added",
    );
  }
  return errorForCode(code, "add", subject(job));
}
