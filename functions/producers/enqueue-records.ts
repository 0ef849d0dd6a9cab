/**
 * The routine every producer trigger shares: map each record to jobs, give each job the id derived from
 * its record, validate every job on its own, then add the valid ones with one `addBulk` per 1,000 jobs
 * and say which records failed and why. Triggers only normalize their event into `SourceRecord`s and
 * shape the answer their event source expects.
 */

import type { Context } from "aws-lambda";
import {
  type BulkJob,
  type JobsOptions,
  type Queue,
  ValidationError,
  wakeWithinMs,
} from "../../core/index.ts";
import { tickFromEnv } from "../config/tick-env.ts";
import { errorFields, logger } from "../log.ts";
import { setInvocationDeadline } from "../request-deadline.ts";
import { indexedJobId } from "./job-ids.ts";

/** One job as `map` returns it; `opts.jobId`, when set, wins over the derived id. */
export interface ProducerJob<TData = unknown> {
  name: string;
  data: TData;
  opts?: JobsOptions;
}

/** One job, several (their ids get `#<index>`), or null to skip the record. */
export type MapResult = ProducerJob | ProducerJob[] | null;

/** Called for every record of the event at once (an async map runs concurrently), before any add. */
export type MapRecord<R> = (record: R, context: Context) => MapResult | Promise<MapResult>;

/** A record as a trigger's normalizer presents it. */
export interface SourceRecord<R> {
  record: R;
  /** The job id derived from the record's identity (see job-ids.ts); undefined when it has none. */
  jobId: string | undefined;
  /** How the source names the record (SQS `messageId`, DynamoDB `SequenceNumber`): for answers and logs. */
  itemId: string | undefined;
  /**
   * Records of one group must be added in order (an SQS FIFO message group, one DynamoDB item's
   * changes). Once a record fails, later records of its group are held back, so its retry cannot land
   * behind them.
   */
  orderGroup?: string;
  /** Set when the record lacks a field the trigger reads: it fails alone and map never sees it. */
  invalid?: ValidationError;
}

export interface RecordFailure<R> {
  entry: SourceRecord<R>;
  /** The record's position in the event. */
  index: number;
  /**
   * `map`: map threw or returned a job core refuses; nothing of the record was written.
   * `add`: the addBulk call carrying its jobs failed. `order`: held back behind a failed record of its group.
   * `record`: the record itself is malformed (see record-shape.ts); map was not called.
   */
  stage: "map" | "add" | "order" | "record";
  error: unknown;
}

export interface EnqueueOutcome<R> {
  /** Per record, in event order, the ids of its jobs (empty when map skipped it or it failed). */
  jobIds: string[][];
  failures: RecordFailure<R>[];
}

export interface EnqueueSettings<R> {
  map: MapRecord<R>;
  /** Replaces the derived id; used as given (core still checks BullMQ's id rules). */
  jobId?: ((record: R) => string) | undefined;
  context: Context;
  /** The trigger's name, for error messages. */
  source: string;
  /** Starts the queue's worker once jobs were added ready or due soon (see ProducerOptions.kick). */
  kick?: ((queue: string, hint?: { wakeAt?: number }) => Promise<void>) | undefined;
  /** The sweeper's tick (ms): a delayed job due within it gets a kick with `wakeAt` (ProducerOptions). */
  wakeWithinMs?: number | undefined;
}

/** Jobs per addBulk call, so that a failed call names the records it carried (core also splits at 1,000). */
const jobsPerCall = 1000;

type Prepared = { jobs: BulkJob[] } | { error: unknown; stage: "map" | "record" };

/** NIMBUSQ_TICK_MS, read once per container (the first event). */
let tickOnce: { value: number | undefined } | undefined;

export async function enqueueRecords<R>(
  queue: Queue,
  entries: SourceRecord<R>[],
  settings: EnqueueSettings<R>,
): Promise<EnqueueOutcome<R>> {
  logger.startInvocation(settings.context);
  setInvocationDeadline(settings.context);
  const prepared = await Promise.all(entries.map((entry) => prepareRecord(queue, entry, settings)));
  const jobIds: string[][] = entries.map(() => []);
  const failures: RecordFailure<R>[] = [];
  const heldGroups = new Set<string>();
  const fail = (index: number, stage: RecordFailure<R>["stage"], error: unknown) => {
    const entry = entries[index] as SourceRecord<R>;
    failures.push({ entry, index, stage, error });
    if (entry.orderGroup !== undefined) heldGroups.add(entry.orderGroup);
  };

  let ready = false;
  let dueSoon: number | undefined;
  tickOnce ??= { value: tickFromEnv(undefined, settings.source) };
  const within = settings.wakeWithinMs ?? tickOnce.value ?? wakeWithinMs;
  let call: { index: number; jobs: BulkJob[] }[] = [];
  let callSize = 0;
  const flush = async () => {
    const records = call;
    call = [];
    callSize = 0;
    if (records.length === 0) return;
    try {
      const outcomes = await queue.addBulkWithOutcomes(records.flatMap((r) => r.jobs));
      const added = outcomes.map((o) => o.job);
      // A lone job the queue's handoff took has its worker started already.
      if (outcomes.some((o) => !o.handoff && !(o.job.delay > 0))) ready = true;
      // A delayed job due before the sweeper's next tick: the kicked worker waits for it.
      for (const job of added) {
        const due = job.timestamp + job.delay;
        if (job.delay > 0 && due <= Date.now() + within) dueSoon = Math.min(dueSoon ?? due, due);
      }
      let at = 0;
      for (const { index, jobs } of records) {
        jobIds[index] = added.slice(at, at + jobs.length).map((job) => job.id);
        at += jobs.length;
      }
    } catch (error) {
      // The call is atomic per 1,000 jobs, but what it wrote before failing is unknown: every record
      // it carried is reported, and a retry is harmless because the ids are derived.
      for (const { index } of records) fail(index, "add", error);
    }
  };

  for (const [index, result] of prepared.entries()) {
    const size = "jobs" in result ? result.jobs.length : 0;
    // Flushed before the group check, so a failure of the previous call holds back this record too.
    if (callSize > 0 && callSize + size > jobsPerCall) await flush();
    const group = (entries[index] as SourceRecord<R>).orderGroup;
    if (group !== undefined && heldGroups.has(group)) {
      fail(index, "order", new Error(`${settings.source}: held back behind a failed record of its group`));
    } else if ("error" in result) {
      fail(index, result.stage, result.error);
    } else if (size > 0) {
      call.push({ index, jobs: result.jobs });
      callSize += size;
    }
  }
  await flush();
  if ((ready || dueSoon !== undefined) && settings.kick) {
    // Awaited (work left running after the answer is frozen with the function); a failure only
    // delays the jobs until the sweeper's next pass, so it never fails the records.
    await settings
      .kick(queue.name, ready ? undefined : { wakeAt: dueSoon as number })
      .catch((error: unknown) =>
        logger.warn(
          `${settings.source}: kicking the worker of queue "${queue.name}" failed`,
          errorFields(error),
        ),
      );
  }
  return { jobIds, failures };
}

/**
 * Maps one record and validates its jobs with the queue's own checks, so an invalid job fails its
 * record here instead of making the whole addBulk call refuse every record.
 */
async function prepareRecord<R>(
  queue: Queue,
  entry: SourceRecord<R>,
  settings: EnqueueSettings<R>,
): Promise<Prepared> {
  if (entry.invalid) return { error: entry.invalid, stage: "record" };
  try {
    const result = await settings.map(entry.record, settings.context);
    if (result === null) return { jobs: [] };
    const list = Array.isArray(result) ? result : [result];
    const baseId = settings.jobId ? settings.jobId(entry.record) : entry.jobId;
    const now = Date.now();
    const jobs = list.map((job, i): BulkJob => {
      const field = Array.isArray(result) ? `map()[${i}]` : "map()";
      if (typeof job !== "object" || job === null) {
        throw new ValidationError(
          field,
          "a job { name, data, opts }, an array of them, or null",
          settings.source,
        );
      }
      let opts = job.opts;
      if (opts?.jobId === undefined) {
        if (baseId === undefined) {
          throw new ValidationError(
            `${field}.opts.jobId`,
            "set, or the record must carry an identity to derive it from (or pass jobId)",
            settings.source,
          );
        }
        opts = { ...opts, jobId: Array.isArray(result) ? indexedJobId(baseId, i) : baseId };
      }
      queue.prepare(job.name, job.data, opts, `${field}.`, now);
      return { name: job.name, data: job.data, opts };
    });
    return { jobs };
  } catch (error) {
    return { error, stage: "map" };
  }
}
