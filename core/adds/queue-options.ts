/** What a Queue is built with (BullMQ's QueueOptions, over an HTTP Redis client). */

import type { RedisRetryOptions } from "../redis/retry.ts";
import type { RedisOption } from "../redis/shard-map.ts";
import type { Telemetry } from "../telemetry/telemetry.ts";
import type { EventsLevel, JobsOptions } from "../types.ts";
import type { WakeHint } from "./add-wake.ts";
import type { HandoffTarget } from "./handoff.ts";

export interface QueueOptions {
  /**
   * An `@upstash/redis` client built with `automaticDeserialization: false` (see `createRedis`), a TCP
   * client, or a ShardMap (the queue then lives on the database the map gives it).
   */
  redis: RedisOption;
  /**
   * How long transient Redis failures (a restart, a failover, a 5xx, a lost answer) are retried with
   * the same request before a call fails (`windowMs`, default 30 000; 0: the client's own retries
   * only), and never past `deadline()` (epoch ms). See core/redis/retry.ts.
   */
  retry?: RedisRetryOptions;
  /** Key prefix, `bull` by default (BullMQ's default). */
  prefix?: string;
  /** Options merged under each job's own options. */
  defaultJobOptions?: JobsOptions;
  /** Largest serialized job data accepted, in bytes (default 512 KB). */
  maxDataBytes?: number;
  /** The events stream's approximate cap, as BullMQ's Queue option of that name (default 10000). */
  streams?: { events?: { maxLen?: number } };
  /**
   * The queue's events level, as its workers' (WorkerOptions.events): "all" (default) writes BullMQ's
   * add events (added, waiting, delayed…); "final" and "none" write none of them.
   */
  events?: EventsLevel;
  /** How long a call's replay guard lives (ms, default 10 minutes). */
  replayGuardTtlMs?: number;
  /** The clock (ms); injectable for tests. */
  clock?: () => number;
  /**
   * Wakes what runs the queue's jobs after an add (e.g. nimbusq/functions' worker kick, an
   * asynchronous Lambda Invoke): `{}` when the add created a job ready to run, `{ wakeAt }` when its
   * earliest new delayed job is due within a minute, so a worker can wait for it. Awaited; its error
   * rejects the add (the jobs are added). Without it, ready jobs wait for the sweeper's next tick and
   * a delayed job is promoted at most one tick late (the tick that notices the add sleeps until it).
   */
  wake?: (queueName: string, hint: WakeHint) => Promise<void> | void;
  /**
   * Starts the queue's worker invocations with the job a lone add leases to them (core/adds/handoff.ts):
   * an add of one new job, ready now, goes straight to active for the invocation it starts, which runs
   * it on arrival. Other adds use `wake`. nimbusq/functions' worker kick offers one (`handoffTarget`).
   */
  handoff?: HandoffTarget;
  /** Tracing: an `add <queue>` span per add/addBulk call (BullMQ's Telemetry shape, see core/telemetry/telemetry.ts). */
  telemetry?: Telemetry;
}
