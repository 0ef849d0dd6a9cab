/**
 * The worker's public types: options, the processor, the drain summary and the local events.
 */

import type { ActiveJob } from "../job/active-job.ts";
import type { BackoffStrategy } from "../job/backoff.ts";
import type { HandedOverJob } from "../job/handed-over.ts";
import type { RedisRetryOptions } from "../redis/retry.ts";
import type { RedisOption } from "../redis/shard-map.ts";
import type { Telemetry } from "../telemetry/telemetry.ts";
import type { DeadLetterOptions, EventsLevel, KeepJobs } from "../types.ts";

/**
 * BullMQ 6's processor signature: the job, its lock token (the worker call's token, as
 * `job.token`) and the attempt's abort signal (as `job.signal`).
 */
export type Processor<TData = unknown, TResult = unknown> = (
  job: ActiveJob<TData, TResult>,
  token?: string,
  signal?: AbortSignal,
) => Promise<TResult>;

export interface WorkerOptions {
  redis: RedisOption;
  /**
   * How long transient Redis failures (a restart, a failover, a 5xx, a lost answer) are retried with
   * the same request before a call fails (`windowMs`, default 30 000; 0: the client's own retries
   * only), and never past `deadline()` (epoch ms). See core/redis/retry.ts.
   */
  retry?: RedisRetryOptions;
  prefix?: string;
  /**
   * Most jobs one call leases. The worker holds at most max(concurrency, batchSize) jobs, so batchSize
   * above concurrency is how many leased jobs wait for a slot (the prefetch depth). Default: twice
   * the concurrency, at least 10.
   */
  batchSize?: number;
  /** Most jobs run at once (default: batchSize when only that is given, else 10). */
  concurrency?: number;
  /**
   * Lock time-to-live (ms, default 30000); every job held — waiting for a slot, running, or finished
   * and not yet acked — is extended every third of it until its ack lands.
   */
  leaseMs?: number;
  /**
   * Finished jobs are acked in groups, by the call that also leases more: once `groupSize` are done
   * (default half the batchSize), once the first has waited `waitMs` (default 10 ms), or at once when
   * a slot would otherwise stay idle.
   */
  ack?: { groupSize?: number; waitMs?: number };
  /**
   * Which events the worker writes to the queue's stream, as the queue's producers should (one
   * setting per queue, see QueueOptions.events): "all" (BullMQ's, the default; QueueEvents and the
   * EventBridge forwarding need it), "final" (completed, failed, retries-exhausted only) or "none".
   */
  events?: EventsLevel;
  /**
   * The most bytes one request may carry (default 10,000,000: Upstash's 10 MB). Acks are split to
   * stay well under it; a single result or failure too large for it fails its job alone.
   */
  maxRequestBytes?: number;
  /**
   * Worker calls (ack + lease) in flight at once: with two, Redis runs one while the worker and the
   * network handle the other (measured: a fifth to a third more jobs per second). Default 2 from a
   * batchSize of 20, else 1, which also keeps BullMQ's strict order at small batches.
   */
  maxCallsInFlight?: number;
  limiter?: { max: number; duration: number };
  /**
   * BullMQ Pro's group settings for grouped jobs (`opts.group`, docs/groups.md): `concurrency`, the
   * most jobs of one group running at once across every worker and invocation; `limit`, the most
   * jobs of one group started per `duration` ms (fixed windows, as Pro counts them). Give every worker
   * of the queue the same values, as Pro asks.
   */
  group?: { concurrency?: number; limit?: { max: number; duration: number } };
  /** Written to each job's `processedBy`. */
  name?: string;
  maxStalledCount?: number;
  stalledInterval?: number;
  removeOnComplete?: KeepJobs;
  removeOnFail?: KeepJobs;
  /** Copies jobs that fail for good to this queue (a job's own `opts.deadLetter` wins); see core/dead-letter/dead-letter.ts. */
  deadLetter?: DeadLetterOptions;
  backoffStrategies?: Record<string, BackoffStrategy>;
  /** BullMQ's `settings.backoffStrategy`: used for backoff types not found in backoffStrategies. */
  settings?: { backoffStrategy?: BackoffStrategy };
  /** The events stream's approximate cap, as BullMQ's `streams.events.maxLen` (default 10000). */
  streams?: { events?: { maxLen?: number } };
  /** Default per-attempt time limit (ms) for jobs without `opts.timeout`. */
  jobTimeoutMs?: number;
  /** Longest any attempt may run (ms), whatever its `opts.timeout` (the serverless worker sets it). */
  maxJobTimeoutMs?: number;
  /** `run` polls an idle queue with a backoff from min to max (ms, default 100 → 5000). */
  poll?: { minMs?: number; maxMs?: number };
  clock?: () => number;
  random?: () => number;
  /** Tracing: a `call <queue>` span per ack+lease call, a `process <queue>` span per attempt (see telemetry.ts). */
  telemetry?: Telemetry;
}

export interface DrainOptions {
  /** Epoch ms: no batch is leased once less than `reserveMs` remains; attempts still running then are handed back. */
  deadline?: number;
  /** Time a leased job may need (default a tenth of the lease or job time limit). */
  reserveMs?: number;
  /** Stops leasing; running attempts finish, unstarted ones are handed back. */
  signal?: AbortSignal;
  /**
   * Jobs an add leased to this drain before it began (core/job/handed-over.ts): they start at once,
   * and the drain's first call acks them (and finds what else is ready) instead of leasing first.
   */
  handedOver?: HandedOverJob[];
  /**
   * The invocation's registry id once its registration has landed: the drain's last call takes it out
   * of the registry when it leaves nothing to do (DrainSummary.unregistered), saving a call.
   */
  unregister?: () => string | undefined;
}

export type StopReason = "empty" | "deadline" | "paused" | "rate-limited" | "aborted";

export interface DrainSummary {
  leased: number;
  completed: number;
  failed: number;
  retried: number;
  delayed: number;
  handedBack: number;
  lostLeases: number;
  stoppedBecause: StopReason;
  /** When more work is due (ms): the earliest delayed job, or when the rate limit ends. */
  nextDueAt?: number;
  /** Its last call took the invocation out of the worker registry (DrainOptions.unregister). */
  unregistered?: boolean;
}

export interface WorkerEvents {
  active: (job: ActiveJob, prev: string) => void;
  progress: (job: ActiveJob, progress: unknown) => void;
  completed: (job: ActiveJob, result: unknown, prev: string) => void;
  failed: (job: ActiveJob | undefined, error: Error, prev: string) => void;
  error: (error: Error) => void;
  stalled: (jobId: string, prev: string) => void;
  drained: () => void;
}
