/**
 * Worker calls played by hand, for tests that act as a worker that dies with its jobs (a lease and
 * nothing after) or acks late: one cycle call (core/worker/calls.ts) with the rest left out.
 */
import type { ActiveJob } from "../../core/index.ts";
import type { AckEntry } from "../../core/job/ack-entry.ts";
import { defaultMaxLenEvents } from "../../core/redis/keys.ts";
import type { QueueContext } from "../../core/redis/queue-context.ts";
import { cycle, type LeaseStatus } from "../../core/worker/calls.ts";

export interface LeaseRequest {
  token: string;
  count: number;
  leaseMs: number;
  limiterMax: number;
  limiterDuration: number;
  groupConcurrency?: number;
  groupLimitMax?: number;
  groupLimitDuration?: number;
  workerName: string;
}

export interface LeaseResult {
  status: LeaseStatus;
  jobs: ActiveJob[];
  /** rate-limited: the limiter's TTL (ms); leased with no job: when the earliest delayed job is due (ms), or 0. */
  info: number;
}

/** Leases jobs without acking any (a worker's first call; the test's worker then dies with it). */
export async function leaseBatch(context: QueueContext, request: LeaseRequest): Promise<LeaseResult> {
  const result = await cycle(context, {
    groupConcurrency: 0,
    groupLimitMax: 0,
    groupLimitDuration: 0,
    ...request,
    peek: 0,
    candidates: [],
    open: true,
    prunes: "",
    maxLenEvents: defaultMaxLenEvents,
    events: "all",
    entries: [],
  });
  const info = result.status === "rate-limited" ? result.info : result.jobs.length === 0 ? result.nextDue : 0;
  return { status: result.status, jobs: result.jobs, info };
}

/** Acks entries without leasing; codes as {@link CycleResult.codes}. */
export async function ackBatch(
  context: QueueContext,
  entries: AckEntry[],
  token: string,
  maxLenEvents = defaultMaxLenEvents,
): Promise<{ codes: number[]; readyLeft: boolean; nextDue: number }> {
  const result = await cycle(context, {
    // Its own guard: the lease that took these jobs used `token` for its guard.
    token: `ack-${token}`,
    count: 0,
    leaseMs: 1000,
    peek: 1,
    candidates: [],
    open: false,
    prunes: "",
    limiterMax: 0,
    limiterDuration: 0,
    groupConcurrency: 0,
    groupLimitMax: 0,
    groupLimitDuration: 0,
    workerName: "",
    maxLenEvents,
    events: "all",
    entries,
  });
  return { codes: result.codes, readyLeft: result.readyLeft, nextDue: result.nextDue };
}
