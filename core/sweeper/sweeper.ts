/**
 * The sweeper loop, behind small ports so that any scheduler runs it (the Lambda adapter ticked by
 * EventBridge, a test with a fake clock): each pass reads the prefix's attention index (one command)
 * and, under a Redis lock (so overlapping or duplicated ticks do nothing twice), sweeps in one script
 * call the queues it says are due — every queue on a container's first pass — starts as many worker
 * invocations as the backlogs need (`startWorkers`), forwards new queue events (`publish`), reports
 * each queue's metrics every Nth pass (`reportMetrics`), and — until shortly before the next tick —
 * sleeps until the next thing is due and passes again. An idle deployment costs one read per tick,
 * whatever its number of queues; `mode: "once"` always passes once.
 *
 * @example
 * const sweeper = createSweeper({ queues: [{ name: "email", workerFunction: "email-worker" }] }, {
 *   connect: () => redis,
 *   startWorkers: (queue, count) => startMyWorkers(queue.workerFunction, count),
 * });
 * await sweeper.run({ token: requestId, remainingMs: 60_000 });
 */

import { defaultPrefix } from "../redis/keys.ts";
import { checkRetry } from "../redis/lifecycle.ts";
import { type RedisPort, toRedisPort, type UpstashRedisLike } from "../redis/redis-port.ts";
import type { RedisRetryOptions } from "../redis/retry.ts";
import type { RedisOption } from "../redis/shard-map.ts";
import { defaultMaxStalledCount, defaultStalledInterval, defaultTickMs } from "../validate.ts";
import { nextUnswept, queuesToSweep, readAttention } from "./attention.ts";
import {
  defaultMaxWorkers,
  fanOutBatchSize,
  nextDueAt,
  passWindow,
  sleepBeforeNextPass,
  workersToStart,
} from "./decisions.ts";
import { forwardBatch, forwardEvents, type PublishEvents } from "./forwarding.ts";
import { MetricsPass, type QueueReport } from "./metrics-pass.ts";
import { releaseSweeperLock, sweep } from "./sweep.ts";

export interface SweptQueue {
  name: string;
  /**
   * Its key prefix, when not the sweeper's `prefix`. Each prefix gets its own loop (lock, attention
   * index): on Redis Cluster a hash-tagged prefix is one slot, and a sweep's keys must share one.
   */
  prefix?: string;
  /** The worker function to invoke for this queue's backlog (none: no invocations). */
  workerFunction?: string;
  /** Jobs per worker invocation, for the fan-out until the queue's workers register theirs (default 10). */
  batchSize?: number;
  maxWorkers?: number;
  /** Its dead-letter queue, whose depth the metrics report (default `<name>-dlq`). */
  deadLetterQueue?: string;
  /**
   * `index` (default): swept when the attention index says so (nimbusq's own scripts note every
   * change). `always`: swept every pass, as before the index — for a queue that BullMQ producers add
   * delayed or waiting jobs to while only nimbusq's workers drain it (BullMQ's scripts do not note
   * the index); it costs a sweep (about 9 billed commands) per pass.
   */
  watch?: "index" | "always";
}

/** How the sweeper loops; an adapter adds its clients (see functions/sweeper.ts's SweeperOptions). */
export interface SweeperSettings {
  queues: (string | SweptQueue)[];
  prefix?: string;
  mode?: "loop" | "once";
  /** The schedule's period (ms, default 60 s): the loop ends shortly before the next tick. */
  tickMs?: number;
  marginMs?: number;
  stalledInterval?: number;
  maxStalledCount?: number;
  /**
   * Least time between two passes of one invocation (ms, default 200): delayed jobs due within it
   * are promoted by one pass, at most this late, instead of one pass each.
   */
  minPassGapMs?: number;
  /**
   * Release the lock when done (default false: it lapses shortly before the next tick, so a
   * duplicated tick in between does nothing, and an idle tick saves the release call). Local runs
   * and tests that sweep back to back set it.
   */
  releaseLock?: boolean;
  /**
   * Report each queue's metrics every this many passes, counted across the container's invocations
   * (default 5; 0 never). A report is one script call for every queue but costs about 9 billed
   * commands per queue (BENCHMARKS.md §4): every 5th pass keeps an idle queue within 650 billed
   * commands an hour.
   */
  metricsEveryPasses?: number;
  /**
   * Transient Redis failures are retried within `retry.windowMs` (default 30 s), never past the
   * invocation's end; a pass that still fails is tried again while the invocation lasts.
   */
  retry?: Pick<RedisRetryOptions, "windowMs">;
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export type { QueueReport } from "./metrics-pass.ts";

export interface SweeperPorts {
  /**
   * The Redis client, asked for by the first run (so an adapter reads its environment then, not at
   * import); a shard map runs one sweeper per database over its queues there (core/sweeper/shards.ts).
   */
  connect(): RedisOption;
  /** Starts `count` invocations of the queue's worker function; resolves once they are on their way. */
  startWorkers(queue: SweptQueue, count: number): Promise<unknown>;
  /** Forwards new queue events; none: no event is read. */
  publish?: PublishEvents | undefined;
  /** Takes every queue's metrics every `metricsEveryPasses` passes; none: no metrics are read. */
  reportMetrics?(reports: QueueReport[], now: number): void;
  /**
   * Told when a pass fails (after its calls' retries), with the passes done; the pass is tried again
   * while the invocation lasts, and the error propagates only when it cannot be.
   */
  failed?(error: unknown, passes: number): void;
}

export interface SweeperResult {
  locked: boolean;
  passes: number;
  invoked: Record<string, number>;
  forwarded: number;
  promoted: number;
  stalled: number;
  /** Job scheduler iterations that had gone missing and were made again. */
  restored: number;
  nextDueAt?: number;
  /**
   * With several databases or prefixes (core/sweeper/shards.ts): the loops that failed after their
   * retries, while the others' work is counted above.
   */
  failures?: SweepFailure[];
}

/** A loop of the sweeper that failed: its database (with a shard map), its prefix and the error. */
export interface SweepFailure {
  database?: string;
  prefix: string;
  error: unknown;
}

export interface Sweeper {
  /** One invocation: `token` names its lock; it loops for at most `remainingMs` less the margin. */
  run(invocation: { token: string; remainingMs: number }): Promise<SweeperResult>;
}

/** A result before any pass: nothing done, not locked out. */
export function emptySweeperResult(): SweeperResult {
  return { locked: false, passes: 0, invoked: {}, forwarded: 0, promoted: 0, stalled: 0, restored: 0 };
}

/** A freshly started invocation takes a moment to register itself; the loop counts it meanwhile (ms). */
const startedCountsFor = 15_000;

/** After a failed pass, wait this long times the failures in a row (at most 5 s) before the next. */
const failedPassWaitMs = 500;

/** What a pass tells the loop: another sweeper holds the lock, events remain, or what it swept. */
type PassOutcome = "locked" | "more-events" | { nextAt: number | undefined };

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createDatabaseSweeper(
  settings: SweeperSettings,
  ports: Omit<SweeperPorts, "connect"> & { connect(): UpstashRedisLike | RedisPort },
): Sweeper {
  // Checked by createSweeper (core/sweeper/shards.ts), its one caller.
  const queues = settings.queues.map((q): SweptQueue => (typeof q === "string" ? { name: q } : q));
  const clock = settings.clock ?? Date.now;
  const prefix = settings.prefix ?? defaultPrefix;
  let redis: RedisPort | undefined;
  // Counted from the container's start: a cold start's first passes cost what an idle pass costs.
  const metrics = new MetricsPass(prefix, queues, settings.metricsEveryPasses ?? 5, ports.reportMetrics);
  const byName = new Map(queues.map((q) => [q.name, q]));
  /** Every queue has been swept once by this container (its first pass sweeps them all). */
  let sweptEverything = false;
  /** The current invocation took the lock (an idle pass reads the index without it). */
  let tookLock = false;

  /** The current invocation's end: retries of its calls never wait past it. */
  let invocationEnd = Number.POSITIVE_INFINITY;

  async function run({ token, remainingMs }: { token: string; remainingMs: number }) {
    const { endAt, lockUntil } = passWindow(
      clock(),
      remainingMs,
      settings.tickMs ?? defaultTickMs,
      settings.marginMs ?? 2000,
    );
    invocationEnd = endAt;
    redis ??= toRedisPort(ports.connect(), {
      ...checkRetry(settings.retry, "createSweeper"),
      deadline: () => invocationEnd,
    });
    const port = redis;
    const result = emptySweeperResult();
    const recentlyStarted = new Map<string, { count: number; until: number }>();
    let failures = 0;
    let release = settings.releaseLock === true;
    tookLock = false;
    try {
      for (;;) {
        const now = clock();
        let outcome: PassOutcome;
        try {
          outcome = await pass(port, token, now, lockUntil, result, recentlyStarted);
          failures = 0;
        } catch (error) {
          // A pass that failed after its calls' own retries: release the lock (another tick or this
          // invocation's next try must not find it held), and try again while the invocation lasts.
          ports.failed?.(error, result.passes);
          release = true;
          failures += 1;
          const wait = Math.min(failedPassWaitMs * failures, 5000);
          if (settings.mode === "once" || clock() + wait >= endAt) throw error;
          await releaseQuietly(port, token);
          await (settings.sleep ?? pause)(wait);
          continue;
        }
        if (outcome === "locked") return result;
        if (settings.mode === "once") break;
        if (outcome === "more-events") continue;
        const due = outcome.nextAt;
        result.nextDueAt = due;
        const wait = sleepBeforeNextPass(due, clock(), endAt, now, settings.minPassGapMs ?? 200);
        if (wait === undefined) break;
        await (settings.sleep ?? pause)(wait);
      }
    } finally {
      if (!result.locked && release && tookLock) await releaseSweeperLock(port, prefix, token);
    }
    return result;
  }

  async function releaseQuietly(port: RedisPort, token: string): Promise<void> {
    try {
      await releaseSweeperLock(port, prefix, token);
    } catch {
      // The lock lapses by itself before the next tick.
    }
  }

  /**
   * One pass: read the attention index; sweep the queues it says are due (every queue on the
   * container's first pass), count, fan out, forward. Answers what the loop does next.
   */
  async function pass(
    port: RedisPort,
    token: string,
    now: number,
    lockUntil: number,
    result: SweeperResult,
    recentlyStarted: Map<string, { count: number; until: number }>,
  ): Promise<PassOutcome> {
    const scores = await readAttention(port, prefix);
    const names = queuesToSweep(queues, scores, now, !sweptEverything);
    if (names.length === 0) {
      result.passes += 1;
      await metrics.count(port, [], now);
      return { nextAt: nextUnswept(queues, scores, new Set()) };
    }
    const swept = await sweep({
      port,
      prefix,
      queues: names,
      token,
      lockTtlMs: Math.max(lockUntil - now, 1000),
      now,
      stalledInterval: settings.stalledInterval ?? defaultStalledInterval,
      maxStalledCount: settings.maxStalledCount ?? defaultMaxStalledCount,
      promoteLimit: 1000,
      eventBatch: ports.publish ? forwardBatch : 0,
      recheckMs: settings.tickMs ?? defaultTickMs,
    });
    if (swept.locked) {
      result.locked = true;
      return "locked";
    }
    tookLock = true;
    sweptEverything = true;
    result.passes += 1;
    await metrics.count(port, swept.queues, now);
    for (const s of swept.queues) {
      result.promoted += s.promoted;
      result.stalled += s.stalled.length;
      result.restored += s.restored.length;
      const queue = byName.get(s.queue) as SweptQueue;
      if (!queue.workerFunction) continue;
      const recent = recentlyStarted.get(s.queue);
      const alreadyStarted = recent && recent.until > now ? recent.count : 0;
      const batchSize = fanOutBatchSize(s, queue.batchSize);
      const count = workersToStart(s, batchSize, queue.maxWorkers ?? defaultMaxWorkers, alreadyStarted);
      if (count === 0) continue;
      await ports.startWorkers(queue, count);
      result.invoked[s.queue] = (result.invoked[s.queue] ?? 0) + count;
      recentlyStarted.set(s.queue, { count: alreadyStarted + count, until: now + startedCountsFor });
    }
    if (ports.publish) {
      const forwarded = await forwardEvents(port, prefix, token, swept.queues, ports.publish);
      result.forwarded += forwarded.forwarded;
      if (forwarded.more) return "more-events";
    }
    const own = nextDueAt(swept.queues);
    const other = nextUnswept(queues, scores, new Set(names));
    return { nextAt: own === undefined ? other : other === undefined ? own : Math.min(own, other) };
  }

  return { run };
}
