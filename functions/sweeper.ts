/**
 * The sweeper Lambda, ticked by EventBridge every minute. Under a Redis lock (so overlapping or
 * duplicated ticks do nothing twice) it sweeps every queue in one script call, starts as many worker
 * invocations as the backlogs need, forwards new queue events to an EventBridge bus, and — until
 * shortly before the next tick — sleeps until the next thing is due and sweeps again. An idle
 * deployment costs one sweep per tick; `mode: "once"` always sweeps once.
 */
import type { Context } from "aws-lambda";
import type { RedisPort, UpstashRedisLike } from "../core/index.ts";
import {
  advanceCursors,
  nextDueAt,
  type QueueSweep,
  readQueueMetrics,
  releaseSweeperLock,
  sleepBeforeNextPass,
  sweep,
  toRedisPort,
  workersToStart,
} from "../core/index.ts";
import { createEventPublisher, type EventEntry, type Publish } from "./aws/event-publisher.ts";
import { createLambdaInvoker, type Invoke } from "./aws/lambda-invoker.ts";
import { createLogger, errorFields, logger } from "./log.ts";
import { metricsEveryFromEnv, queueMetricsLine } from "./metrics.ts";
import { redisOrEnv } from "./redis-from-env.ts";
import { setInvocationDeadline } from "./request-deadline.ts";

export interface SweptQueue {
  name: string;
  /** The worker function to invoke for this queue's backlog (none: no invocations). */
  workerFunction?: string;
  batchSize?: number;
  maxWorkers?: number;
  /** Its dead-letter queue, whose depth the metrics report (default `<name>-dlq`). */
  deadLetterQueue?: string;
}

export interface SweeperOptions {
  queues: (string | SweptQueue)[];
  redis?: UpstashRedisLike | RedisPort;
  prefix?: string;
  mode?: "loop" | "once";
  /** The schedule's period (ms, default 60 s): the loop ends shortly before the next tick. */
  tickMs?: number;
  marginMs?: number;
  stalledInterval?: number;
  maxStalledCount?: number;
  /** EventBridge bus to forward queue events to; none disables forwarding. */
  eventBus?: string;
  eventSource?: string;
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
   * Emit each queue's metrics (one EMF line per queue on stdout) every this many passes, counted
   * across the container's invocations (default NIMBUSQ_METRICS_EVERY, else 5; 0 never). An emission
   * is one script call for every queue but costs about 9 billed commands per queue (BENCHMARKS.md §4):
   * every 5th pass keeps an idle queue within 650 billed commands an hour.
   */
  metricsEveryPasses?: number;
  /** Where log and metric lines go (default stdout). */
  output?: (line: string) => void;
  invoke?: Invoke;
  publish?: Publish;
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
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

type SweeperContext = Pick<Context, "getRemainingTimeInMillis" | "awsRequestId">;

/** The EventBridge entry for one queue event: `nimbusq.job.<event>` (or `nimbusq.queue.<event>`). */
export function eventEntry(
  queue: string,
  event: QueueSweep["events"][number],
  bus: string,
  source: string,
): EventEntry {
  const { event: name = "unknown", ...fields } = event.fields;
  const detail = {
    queue,
    eventId: event.id,
    ...(event.jobName !== undefined ? { name: event.jobName } : {}),
    ...fields,
  };
  return {
    EventBusName: bus,
    Source: source,
    DetailType: `nimbusq.${fields.jobId !== undefined ? "job" : "queue"}.${name}`,
    Detail: JSON.stringify(detail),
  };
}

export function sweeperHandler(options: SweeperOptions) {
  const queues: SweptQueue[] = options.queues.map((q) => (typeof q === "string" ? { name: q } : q));
  const clock = options.clock ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let port: RedisPort | undefined;
  let invoke = options.invoke;
  let publish = options.publish;
  const log = options.output ? createLogger({ output: options.output }) : logger;
  const emit = options.output ?? ((line: string) => process.stdout.write(`${line}\n`));
  const metricsEvery = options.metricsEveryPasses ?? metricsEveryFromEnv(process.env);
  // Counted from the container's start: a cold start's first passes cost what an idle pass costs.
  let passesSinceMetrics = 0;
  const stalledSinceMetrics = new Map<string, number>();

  return async (_event: unknown, context: SweeperContext): Promise<SweeperResult> => {
    setInvocationDeadline(context);
    log.startInvocation(context);
    port ??= toRedisPort(redisOrEnv(options.redis));
    const prefix = options.prefix ?? "bull";
    const marginMs = options.marginMs ?? 2000;
    const started = clock();
    const window = Math.min(context.getRemainingTimeInMillis(), options.tickMs ?? 60_000);
    const endAt = started + window - marginMs;
    // The lock lapses half a margin before the next tick, even if this invocation dies.
    const lockUntil = started + window - marginMs / 2;
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
    const token = context.awsRequestId;
    try {
      for (;;) {
        const now = clock();
        const swept = await sweep({
          port,
          prefix,
          queues: queues.map((q) => q.name),
          token,
          lockTtlMs: Math.max(lockUntil - now, 1000),
          now,
          stalledInterval: options.stalledInterval ?? 30_000,
          maxStalledCount: options.maxStalledCount ?? 1,
          promoteLimit: 1000,
          eventBatch: options.eventBus ? 100 : 0,
        });
        if (swept.locked) {
          result.locked = true;
          return result;
        }
        result.passes += 1;
        for (const s of swept.queues) {
          stalledSinceMetrics.set(s.queue, (stalledSinceMetrics.get(s.queue) ?? 0) + s.stalled.length);
        }
        if (metricsEvery > 0 && ++passesSinceMetrics >= metricsEvery) {
          passesSinceMetrics = 0;
          await emitMetrics(port, now);
        }
        for (const [i, s] of swept.queues.entries()) {
          result.promoted += s.promoted;
          result.stalled += s.stalled.length;
          result.restored += s.restored.length;
          const config = queues[i] as SweptQueue;
          const recent = recentlyStarted.get(s.queue);
          const alreadyStarted = recent && recent.until > now ? recent.count : 0;
          const count = config.workerFunction
            ? workersToStart(s, config.batchSize ?? 10, config.maxWorkers ?? 10, alreadyStarted)
            : 0;
          if (count > 0) {
            invoke ??= createLambdaInvoker();
            const fn = config.workerFunction as string;
            await Promise.all(
              Array.from({ length: count }, () => invoke?.(fn, { queue: s.queue, reason: "sweeper" })),
            );
            result.invoked[s.queue] = (result.invoked[s.queue] ?? 0) + count;
            // A fresh invocation takes a moment to register itself; count it meanwhile.
            recentlyStarted.set(s.queue, { count: alreadyStarted + count, until: now + 15_000 });
          }
        }
        const moreEvents = options.eventBus ? await forward(swept.queues) : false;
        if (options.mode === "once") break;
        if (moreEvents) continue;
        const due = nextDueAt(swept.queues);
        result.nextDueAt = due;
        const wait = sleepBeforeNextPass(due, clock(), endAt, now, options.minPassGapMs ?? 200);
        if (wait === undefined) break;
        await sleep(wait);
      }
    } catch (error) {
      log.error("nimbusq sweeper: the pass failed", { passes: result.passes, ...errorFields(error) });
      throw error;
    } finally {
      if (!result.locked && options.releaseLock) await releaseSweeperLock(port, prefix, token);
    }
    log.debug("nimbusq sweeper: done", { ...result, invoked: JSON.stringify(result.invoked) });
    return result;

    /** One EMF line per queue; the counts' read and reset is one script call for all queues. */
    async function emitMetrics(redis: RedisPort, now: number): Promise<void> {
      const read = await readQueueMetrics(
        redis,
        prefix,
        queues.map((q) => ({ name: q.name, deadLetterQueue: q.deadLetterQueue })),
      );
      for (const m of read) {
        const stalledRecovered = stalledSinceMetrics.get(m.queue) ?? 0;
        stalledSinceMetrics.set(m.queue, 0);
        const values = {
          ...m,
          completedSinceLastPass: m.completedSinceLastRead,
          failedSinceLastPass: m.failedSinceLastRead,
          stalledRecovered,
        };
        emit(queueMetricsLine(m.queue, values, now));
      }
    }

    /** Forwards each queue's new events; true when a queue had a full batch (more to read). */
    async function forward(swept: QueueSweep[]): Promise<boolean> {
      const entries: EventEntry[] = [];
      const owners: { queue: string; id: string }[] = [];
      for (const s of swept) {
        for (const event of s.events) {
          entries.push(
            eventEntry(s.queue, event, options.eventBus as string, options.eventSource ?? "nimbusq"),
          );
          owners.push({ queue: s.queue, id: event.id });
        }
      }
      if (entries.length === 0) return false;
      publish ??= createEventPublisher();
      const { failed } = await publish(entries);
      const firstFailure = new Map<string, number>();
      for (const index of failed) {
        const queue = owners[index]?.queue as string;
        firstFailure.set(queue, Math.min(firstFailure.get(queue) ?? index, index));
      }
      const lastIds = new Map<string, string>();
      for (const [index, owner] of owners.entries()) {
        const stop = firstFailure.get(owner.queue);
        if (stop === undefined || index < stop) lastIds.set(owner.queue, owner.id);
      }
      result.forwarded += entries.length - failed.length;
      await advanceCursors(
        port as RedisPort,
        prefix,
        token,
        [...lastIds].map(([queue, lastId]) => ({ queue, lastId })),
      );
      return failed.length === 0 && swept.some((s) => s.events.length >= 100);
    }
  };
}
