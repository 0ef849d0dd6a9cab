/**
 * Making job scheduler iterations after the first: the worker makes each scheduler's next iteration
 * when it takes the current one (as BullMQ's worker does, before processing), for a whole leased batch
 * in one call; the sweeper makes again an iteration that went missing. Iteration ids are
 * `repeat:<id>:<millis>` and the script never writes over an existing job, so a replayed, late or
 * duplicated call makes nothing twice.
 */

import type { ActiveJob } from "../job/active-job.ts";
import { decodeScheduler, encodeOptions, groupIdOf, hashFromFlat } from "../redis/codec.ts";
import {
  type AddIterationsArgsIterationsItem,
  addIterations,
  decodeAddIterations,
} from "../redis/generated/scripts.ts";
import { attentionKey, defaultMaxLenEvents, queueKeyPrefix, queueKeys } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
import type { JobsOptions } from "../types.ts";
import { type IterationRepeat, planNextIteration, shouldRestoreIteration } from "./schedule-time.ts";
import { jsonEscaped } from "./scheduler-options.ts";

/** The opts JSON the script completes: jobId and delay depend on the millis it settles on. */
function optsHead(opts: Record<string, unknown>): string {
  return encodeOptions(opts as JobsOptions).slice(0, -1);
}

function item(
  schedulerId: string,
  current: string,
  opts: Record<string, unknown>,
  next: { millis?: number; again?: boolean },
): AddIterationsArgsIterationsItem {
  return {
    schedulerId,
    idJson: jsonEscaped(schedulerId),
    current,
    nextMillis: next.millis ?? "",
    again: next.again ? "1" : "",
    optsHead: optsHead(opts),
    priority: Number(opts.priority ?? 0),
    lifo: opts.lifo === true ? "1" : "",
    group: groupIdOf(opts),
  };
}

async function run(
  port: RedisPort,
  prefix: string,
  queueName: string,
  now: number,
  maxLenEvents: number,
  iterations: AddIterationsArgsIterationsItem[],
): Promise<string[]> {
  if (iterations.length === 0) return [];
  const keys = queueKeys(prefix, queueName);
  const { ids } = decodeAddIterations(
    await runScript(
      port,
      addIterations,
      { ...keys, schedulers: keys.repeat, attention: attentionKey(prefix) },
      { prefix: queueKeyPrefix(prefix, queueName), now, maxLenEvents, iterations },
    ),
  );
  // "0": nothing was made for that item (the script answers the number 0).
  return ids.filter((id) => id !== "0");
}

/**
 * The next iteration's options, as BullMQ's worker derives them from the current one's: the same
 * options with the iteration number raised, a fresh timestamp, and `prevMillis` = the planned run
 * for cron patterns (BullMQ leaves it out for `every`).
 */
function nextIterationOptions(
  opts: Record<string, unknown>,
  schedulerId: string,
  count: number,
  now: number,
  millis: number | undefined,
): Record<string, unknown> {
  const { jobId: _id, delay: _delay, prevMillis: _prev, repeat, ...rest } = opts;
  const { immediately: _now, offset, ...schedule } = (repeat ?? {}) as Record<string, unknown>;
  return {
    ...rest,
    repeat: { ...schedule, ...(schedule.every && offset ? { offset } : {}), count },
    timestamp: now,
    ...(millis !== undefined ? { prevMillis: millis } : {}),
    repeatJobKey: schedulerId,
  };
}

/** Makes the next iteration of every scheduler job in a leased batch; returns the ids made. */
async function addNextIterations(
  context: QueueContext,
  jobs: readonly ActiveJob[],
  maxLenEvents: number,
): Promise<string[]> {
  const now = context.clock();
  const iterations: AddIterationsArgsIterationsItem[] = [];
  for (const job of jobs) {
    const schedulerId = job.repeatJobKey;
    if (!schedulerId) continue;
    const repeat = (job.opts.repeat ?? {}) as IterationRepeat;
    const prevMillis = typeof job.opts.prevMillis === "number" ? job.opts.prevMillis : undefined;
    let next: ReturnType<typeof planNextIteration>;
    try {
      next = planNextIteration(repeat, prevMillis, now);
    } catch {
      // A pattern cron-parser refuses (written by someone else) makes no next run, as in BullMQ.
      continue;
    }
    if (!next) continue;
    const opts = nextIterationOptions(job.opts, schedulerId, next.count, now, next.millis);
    iterations.push(item(schedulerId, job.id, opts, { millis: next.millis }));
  }
  const { port, prefix, queueName } = context;
  return await run(port, prefix, queueName, now, maxLenEvents, iterations);
}

/**
 * The jobs of a leased batch to run, once the next iteration of each scheduler job among them is made
 * (one call, before any runs, as BullMQ's worker does when it takes one). If that fails, the scheduler
 * jobs are not run: their leases lapse and the stalled check puts them back, so the schedule goes on.
 */
export async function withNextIterations(
  context: QueueContext,
  jobs: ActiveJob[],
  maxLenEvents: number,
  onError: (error: Error) => void,
): Promise<ActiveJob[]> {
  if (!jobs.some((job) => job.repeatJobKey)) return jobs;
  try {
    await addNextIterations(context, jobs, maxLenEvents);
    return jobs;
  } catch (error) {
    onError(error as Error);
    return jobs.filter((job) => !job.repeatJobKey);
  }
}

/** A scheduler the sweep found due with its iteration missing: its id, planned millis and hash. */
export interface MissingIteration {
  schedulerId: string;
  millis: string;
  hash: string[];
}

/**
 * Makes again each missing iteration that cannot have been the schedule's last (see
 * `shouldRestoreIteration`), with the options the scheduler's template gives; returns the ids made.
 */
export async function restoreIterations(
  port: RedisPort,
  prefix: string,
  queueName: string,
  missing: readonly MissingIteration[],
  now: number,
  maxLenEvents = defaultMaxLenEvents,
): Promise<string[]> {
  const iterations: AddIterationsArgsIterationsItem[] = [];
  for (const { schedulerId, millis, hash } of missing) {
    const planned = Number(millis);
    const scheduler = decodeScheduler(schedulerId, hashFromFlat(hash), planned);
    // No `ic`: not a job scheduler (a legacy 5.x repeatable entry), which 6.x never runs.
    if (scheduler?.iterationCount === undefined) continue;
    const { iterationCount, pattern, every, tz, limit, startDate, endDate } = scheduler;
    if (!shouldRestoreIteration({ pattern, endDate, tz, startDate, limit, iterationCount }, planned, now))
      continue;
    const schedule = { pattern, every, tz, limit, startDate, endDate };
    const repeat = Object.fromEntries(Object.entries(schedule).filter(([, v]) => v !== undefined));
    const opts = {
      ...scheduler.template?.opts,
      repeat: { ...repeat, count: iterationCount },
      timestamp: now,
      ...(pattern ? { prevMillis: planned } : {}),
      repeatJobKey: schedulerId,
    };
    iterations.push(item(schedulerId, `repeat:${schedulerId}:${millis}`, opts, { again: true }));
  }
  return await run(port, prefix, queueName, now, maxLenEvents, iterations);
}
