/**
 * The sweeper loop, behind small ports so that any scheduler runs it (the Lambda adapter ticked by
 * EventBridge, a test with a fake clock): under a Redis lock (so overlapping or duplicated ticks do
 * nothing twice) it sweeps every queue in one script call, starts as many worker invocations as the
 * backlogs need (`startWorkers`), forwards new queue events (`publish`), reports each queue's metrics
 * every Nth pass (`reportMetrics`), and — until shortly before the next tick — sleeps until the next
 * thing is due and sweeps again. An idle deployment costs one sweep per tick; `mode: "once"` always
 * sweeps once.
 *
 * @example
 * const sweeper = createSweeper({ queues: [{ name: "email", workerFunction: "email-worker" }] }, {
 *   connect: () => redis,
 *   startWorkers: (queue, count) => startMyWorkers(queue.workerFunction, count),
 * });
 * await sweeper.run({ token: requestId, remainingMs: 60_000 });
 */

import { type QueueMetrics, readQueueMetrics } from "../queue/queue-metrics.ts";
import { defaultPrefix } from "../redis/keys.ts";
import { checkRetry } from "../redis/lifecycle.ts";
import { type RedisPort, toRedisPort, type UpstashRedisLike } from "../redis/redis-port.ts";
import type { RedisRetryOptions } from "../redis/retry.ts";
import { fanOutBatchSize, nextDueAt, passWindow, sleepBeforeNextPass, workersToStart } from "./decisions.ts";
import { forwardBatch, forwardEvents, type PublishEvents } from "./forwarding.ts";
import { checkSweeperSettings } from "./settings-check.ts";
import { type QueueSweep, releaseSweeperLock, sweep } from "./sweep.ts";

export interface SweptQueue {
  name: string;
  /** The worker function to invoke for this queue's backlog (none: no invocations). */
  workerFunction?: string;
  /** Jobs per worker invocation, for the fan-out until the queue's workers register theirs (default 10). */
  batchSize?: number;
  maxWorkers?: number;
  /** Its dead-letter queue, whose depth the metrics report (default `<name>-dlq`). */
  deadLetterQueue?: string;
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

/** A queue's metrics as reported: its state, and what finished and stalled since the last report. */
export interface QueueReport extends Omit<QueueMetrics, "completedSinceLastRead" | "failedSinceLastRead"> {
  completedSinceLastPass: number;
  failedSinceLastPass: number;
  stalledRecovered: number;
}

export interface SweeperPorts {
  /** The Redis client, asked for by the first run (so an adapter reads its environment then, not at import). */
  connect(): UpstashRedisLike | RedisPort;
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
}

export interface Sweeper {
  /** One invocation: `token` names its lock; it loops for at most `remainingMs` less the margin. */
  run(invocation: { token: string; remainingMs: number }): Promise<SweeperResult>;
}

/** A freshly started invocation takes a moment to register itself; the loop counts it meanwhile (ms). */
const startedCountsFor = 15_000;

/** After a failed pass, wait this long times the failures in a row (at most 5 s) before the next. */
const failedPassWaitMs = 500;

/** What a pass tells the loop: another sweeper holds the lock, events remain, or what it swept. */
type PassOutcome = "locked" | "more-events" | readonly QueueSweep[];

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createSweeper(settings: SweeperSettings, ports: SweeperPorts): Sweeper {
  checkSweeperSettings(settings, ports);
  const queues = settings.queues.map((q): SweptQueue => (typeof q === "string" ? { name: q } : q));
  const clock = settings.clock ?? Date.now;
  const prefix = settings.prefix ?? defaultPrefix;
  const { reportMetrics } = ports;
  let redis: RedisPort | undefined;
  const metricsEvery = settings.metricsEveryPasses ?? 5;
  // Counted from the container's start: a cold start's first passes cost what an idle pass costs.
  let passesSinceMetrics = 0;
  const stalledSinceMetrics = new Map<string, number>();

  async function countPass(port: RedisPort, swept: readonly QueueSweep[], now: number): Promise<void> {
    for (const s of swept) {
      stalledSinceMetrics.set(s.queue, (stalledSinceMetrics.get(s.queue) ?? 0) + s.stalled.length);
    }
    if (!reportMetrics || metricsEvery === 0 || ++passesSinceMetrics < metricsEvery) return;
    passesSinceMetrics = 0;
    const read = await readQueueMetrics(
      port,
      prefix,
      queues.map((q) => ({ name: q.name, deadLetterQueue: q.deadLetterQueue })),
    );
    const reports = read.map(({ completedSinceLastRead, failedSinceLastRead, ...state }): QueueReport => {
      const stalledRecovered = stalledSinceMetrics.get(state.queue) ?? 0;
      stalledSinceMetrics.set(state.queue, 0);
      return {
        ...state,
        completedSinceLastPass: completedSinceLastRead,
        failedSinceLastPass: failedSinceLastRead,
        stalledRecovered,
      };
    });
    reportMetrics(reports, now);
  }

  /** The current invocation's end: retries of its calls never wait past it. */
  let invocationEnd = Number.POSITIVE_INFINITY;

  async function run({ token, remainingMs }: { token: string; remainingMs: number }) {
    const { endAt, lockUntil } = passWindow(
      clock(),
      remainingMs,
      settings.tickMs ?? 60_000,
      settings.marginMs ?? 2000,
    );
    invocationEnd = endAt;
    redis ??= toRedisPort(ports.connect(), {
      ...checkRetry(settings.retry, "createSweeper"),
      deadline: () => invocationEnd,
    });
    const port = redis;
    const result: SweeperResult = {
      locked: false,
      passes: 0,
      invoked: {},
      forwarded: 0,
      promoted: 0,
      stalled: 0,
      restored: 0,
    };
    const recentlyStarted = new Map<string, { count: number; until: number }>();
    let failures = 0;
    let release = settings.releaseLock === true;
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
        const due = nextDueAt(outcome);
        result.nextDueAt = due;
        const wait = sleepBeforeNextPass(due, clock(), endAt, now, settings.minPassGapMs ?? 200);
        if (wait === undefined) break;
        await (settings.sleep ?? pause)(wait);
      }
    } finally {
      if (!result.locked && release) await releaseSweeperLock(port, prefix, token);
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

  /** One pass: sweep, count, fan out, forward. Answers what the loop does next. */
  async function pass(
    port: RedisPort,
    token: string,
    now: number,
    lockUntil: number,
    result: SweeperResult,
    recentlyStarted: Map<string, { count: number; until: number }>,
  ): Promise<PassOutcome> {
    const swept = await sweep({
      port,
      prefix,
      queues: queues.map((q) => q.name),
      token,
      lockTtlMs: Math.max(lockUntil - now, 1000),
      now,
      stalledInterval: settings.stalledInterval ?? 30_000,
      maxStalledCount: settings.maxStalledCount ?? 1,
      promoteLimit: 1000,
      eventBatch: ports.publish ? forwardBatch : 0,
    });
    if (swept.locked) {
      result.locked = true;
      return "locked";
    }
    result.passes += 1;
    await countPass(port, swept.queues, now);
    for (const [i, s] of swept.queues.entries()) {
      result.promoted += s.promoted;
      result.stalled += s.stalled.length;
      result.restored += s.restored.length;
      const queue = queues[i] as SweptQueue;
      if (!queue.workerFunction) continue;
      const recent = recentlyStarted.get(s.queue);
      const alreadyStarted = recent && recent.until > now ? recent.count : 0;
      const batchSize = fanOutBatchSize(s, queue.batchSize);
      const count = workersToStart(s, batchSize, queue.maxWorkers ?? 10, alreadyStarted);
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
    return swept.queues;
  }

  return { run };
}
