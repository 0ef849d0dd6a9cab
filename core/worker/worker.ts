/**
 * A worker: a streaming pipeline (core/worker/pipeline.ts) that runs up to `concurrency` jobs at once,
 * acks finished ones in small groups with the same call that leases more, and keeps every held job's
 * lease alive until its ack lands. `drain` stops when nothing is ready (one invocation of a serverless
 * function); `run` keeps polling, without blocking commands, until its signal fires (a container).
 */

import { checkWorkerDeadLetter } from "../dead-letter/dead-letter.ts";
import { RateLimitError } from "../errors.ts";
import { Emitter } from "../events/emitter.ts";
import type { ActiveJob } from "../job/active-job.ts";
import type { BackoffStrategy } from "../job/backoff.ts";
import { decodeSetRateLimit, setRateLimit } from "../redis/generated/scripts.ts";
import { defaultMaxLenEvents, defaultPrefix, queueKeys } from "../redis/keys.ts";
import { Lifecycle, redisPortFrom } from "../redis/lifecycle.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import { isShardMap } from "../redis/shard-map.ts";
import type { EventsLevel } from "../types.ts";
import {
  Checker,
  checkPrefix,
  checkQueueName,
  defaultMaxStalledCount,
  defaultStalledInterval,
} from "../validate.ts";
import { defaultMaxRequestBytes } from "./ack-size.ts";
import { runStalledCheck } from "./calls.ts";
import { checkGroupOptions, holdGroup } from "./group-limit.ts";
import { Pipeline } from "./pipeline.ts";
import { pollDrains } from "./poll.ts";
import { isProcessorFile, type Sandbox, sandboxFor } from "./sandbox.ts";
import { linkSignals } from "./signals.ts";
import type { DrainOptions, DrainSummary, Processor, WorkerEvents, WorkerOptions } from "./types.ts";
import type { WorkerSetup } from "./worker-setup.ts";

export type {
  DrainOptions,
  DrainSummary,
  Processor,
  StopReason,
  WorkerEvents,
  WorkerOptions,
} from "./types.ts";

const eventsLevels: readonly EventsLevel[] = ["all", "final", "none"];

export class Worker<TData = unknown, TResult = unknown> extends Emitter<WorkerEvents> {
  readonly name: string;
  readonly context: QueueContext;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  /** The worker has a rate limiter (no job is handed over to its invocations). */
  get limited(): boolean {
    return this.options.limiter !== undefined;
  }
  /** The events stream's cap (streams.events.maxLen, BullMQ's default 10,000). */
  get maxLenEvents(): number {
    return this.options.streams?.events?.maxLen ?? defaultMaxLenEvents;
  }
  /** Which events the worker writes (the queue's events level; see WorkerOptions.events). */
  readonly events: EventsLevel;
  readonly maxRequestBytes: number;
  readonly maxCallsInFlight: number;
  private readonly ack: { groupSize: number; waitMs: number };
  private readonly id = crypto.randomUUID();
  private sequence = 0;
  private readonly lifecycle: Lifecycle;
  /** Fires on close(): pipelines stop leasing, run() stops polling. */
  private readonly stopping = new AbortController();
  /** The drains and runs under way (isRunning, and what close() waits for). */
  private readonly busy = new Set<Promise<unknown>>();
  /** What runs an attempt: the processor function, or the sandbox of a processor file. */
  private readonly attempt: (job: ActiveJob) => Promise<unknown>;
  private readonly sandbox: Sandbox | undefined;
  /** What every drain's pipeline reads (made once the options are checked). */
  private readonly setup: WorkerSetup;

  constructor(
    queueName: string,
    /** The processor, or the path (or file URL) of a processor file run in worker threads. */
    readonly processor: Processor<TData, TResult> | string | URL,
    readonly options: WorkerOptions,
  ) {
    super();
    const check = new Checker(`Worker "${queueName}"`);
    this.name = checkQueueName(queueName, `Worker "${queueName}"`);
    this.lifecycle = new Lifecycle(`Worker "${this.name}"`);
    // A transient failure being retried is told as an `error` event, as BullMQ tells connection errors.
    const port = this.lifecycle.guard(
      redisPortFrom(
        options,
        `Worker "${this.name}"`,
        { onRetry: (error) => this.emit("error", error), signal: this.stopping.signal },
        this.name,
      ),
    );
    // Only a batchSize: it is the concurrency too (no prefetch). Otherwise the default prefetches as
    // many jobs again as run (at least 10 per call), so freed slots start without a round trip.
    this.concurrency = check.integer("concurrency", options.concurrency ?? options.batchSize ?? 10, 1, 1000);
    this.batchSize = check.integer(
      "batchSize",
      options.batchSize ?? Math.max(10, 2 * this.concurrency),
      1,
      1000,
    );
    this.leaseMs = check.integer("leaseMs", options.leaseMs ?? 30_000, 1000);
    this.events = options.events ?? "all";
    check.integer("streams.events.maxLen", options.streams?.events?.maxLen ?? defaultMaxLenEvents, 1);
    if (!eventsLevels.includes(this.events))
      check.fail("events", `one of ${eventsLevels.join(", ")}`, options.events);
    this.maxRequestBytes = check.integer(
      "maxRequestBytes",
      options.maxRequestBytes ?? defaultMaxRequestBytes,
      1_000_000,
    );
    this.maxCallsInFlight = check.integer(
      "maxCallsInFlight",
      options.maxCallsInFlight ?? (this.batchSize >= 20 ? 2 : 1),
      1,
      4,
    );
    this.ack = {
      groupSize: check.integer(
        "ack.groupSize",
        options.ack?.groupSize ?? Math.max(1, Math.floor(this.batchSize / 2)),
        1,
      ),
      waitMs: check.integer("ack.waitMs", options.ack?.waitMs ?? 10, 0),
    };
    if (!isProcessorFile(processor) && typeof processor !== "function")
      check.fail("processor", "a function (job) => result, or the path of a processor file", processor);
    this.sandbox = isProcessorFile(processor)
      ? sandboxFor(processor, { concurrency: this.concurrency }, `Worker "${this.name}"`)
      : undefined;
    this.attempt =
      this.sandbox?.processor ?? (processor as Processor as (job: ActiveJob) => Promise<unknown>);
    const shards = isShardMap(options.redis) ? options.redis : undefined;
    checkWorkerDeadLetter(check, options.deadLetter, queueName, options.prefix ?? defaultPrefix, shards);
    checkGroupOptions(check, options.group);
    if (options.limiter) {
      check.integer("limiter.max", options.limiter.max, 1);
      check.integer("limiter.duration", options.limiter.duration, 1);
    }
    this.context = {
      port,
      prefix: checkPrefix(options.prefix ?? defaultPrefix, `Worker "${queueName}"`),
      queueName,
      clock: options.clock ?? Date.now,
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
      ...(shards ? { shards } : {}),
    };
    this.setup = this.makeSetup();
  }

  private clock(): number {
    return this.context.clock();
  }

  /** Makes every worker of the queue wait `ms` before leasing (then throw RateLimitError). */
  async rateLimit(ms: number): Promise<void> {
    new Checker(`Worker "${this.name}": rateLimit`).integer("ms", ms, 1);
    const keys = queueKeys(this.context.prefix, this.name);
    decodeSetRateLimit(await runScript(this.context.port, setRateLimit, { limiter: keys.limiter }, { ms }));
  }

  /**
   * Holds the job's group for `ms` (BullMQ Pro's rateLimitGroup): no worker takes its jobs until then,
   * the other groups keep going. Throw `Worker.RateLimitError()` after it: the job goes back to the
   * front of its group, uncounted.
   */
  async rateLimitGroup(job: ActiveJob, ms: number): Promise<void> {
    await holdGroup(this.context, job, ms);
  }

  /** The error to throw after `rateLimit` or `rateLimitGroup` (BullMQ's Worker.RateLimitError()). */
  static RateLimitError(): RateLimitError {
    return new RateLimitError();
  }

  /** BullMQ's stalled check for this queue; returns the requeued ids (empty when it ran recently). */
  async recoverStalled(): Promise<string[]> {
    const moved = await runStalledCheck(this.context, {
      stalledInterval: this.options.stalledInterval ?? defaultStalledInterval,
      maxStalledCount: this.options.maxStalledCount ?? defaultMaxStalledCount,
    });
    for (const id of moved ?? []) this.emit("stalled", id, "active");
    return moved ?? [];
  }

  /**
   * Runs the pipeline until nothing is ready, the deadline (epoch ms) is near, the queue is paused or
   * rate limited, or the signal fires; every job it leased is acked or handed back before it resolves.
   */
  async drain(options: DrainOptions = {}): Promise<DrainSummary> {
    this.lifecycle.assertOpen("drain");
    const { signal, release } = linkSignals(this.stopping.signal, options.signal);
    try {
      return await this.track(new Pipeline(this.setup, { ...options, signal }).run());
    } finally {
      release();
    }
  }

  private async track<T>(work: Promise<T>): Promise<T> {
    this.busy.add(work);
    try {
      return await work;
    } finally {
      this.busy.delete(work);
    }
  }

  /** True while a `drain` or `run` is under way (BullMQ's `isRunning`). */
  isRunning(): boolean {
    return this.busy.size > 0;
  }

  /** Resolves once Redis answered one read of the queue (a wrong URL or token rejects here). */
  async waitUntilReady(): Promise<void> {
    this.lifecycle.assertOpen("waitUntilReady");
    await this.context.port.hgetall(queueKeys(this.context.prefix, this.name).meta);
  }

  /**
   * BullMQ's `close(force)`: stops leasing at once; running jobs finish and are acked, jobs leased but
   * not started go back to the front of the queue, then it resolves. With `force` it resolves at once
   * and the running jobs' leases lapse (the stalled check hands them to another worker, as BullMQ's
   * does). Idempotent; afterwards `drain`/`run` are refused with a ClosedError.
   */
  close(force = false): Promise<void> {
    return this.lifecycle.close(async () => {
      this.stopping.abort();
      if (!force) await Promise.allSettled([...this.busy]);
      await this.sandbox?.close();
    });
  }

  /** The close under way or done, undefined while open (BullMQ's `closing`). */
  get closing(): Promise<void> | undefined {
    return this.lifecycle.closing;
  }

  /** What every drain's pipeline reads, settled once. */
  private makeSetup(): WorkerSetup {
    return {
      context: this.context,
      settings: {
        batchSize: this.batchSize,
        concurrency: this.concurrency,
        leaseMs: this.leaseMs,
        jobTimeoutMs: this.options.jobTimeoutMs,
        ackGroupSize: this.ack.groupSize,
        ackWaitMs: this.ack.waitMs,
        pruneEveryCalls: 10,
        maxRequestBytes: this.maxRequestBytes,
        maxCallsInFlight: this.maxCallsInFlight,
        limiterMax: this.options.limiter?.max ?? 0,
        limiterDuration: this.options.limiter?.duration ?? 0,
        groupConcurrency: this.options.group?.concurrency ?? 0,
        groupLimitMax: this.options.group?.limit?.max ?? 0,
        groupLimitDuration: this.options.group?.limit?.duration ?? 0,
        workerName: this.options.name ?? "",
        maxLenEvents: this.maxLenEvents,
        events: this.events,
      },
      outcome: {
        removeOnComplete: this.options.removeOnComplete,
        removeOnFail: this.options.removeOnFail,
        backoffStrategies: this.strategies(),
        random: this.options.random,
        deadLetter: this.options.deadLetter,
      },
      attempt: {
        processor: this.attempt,
        clock: () => this.clock(),
        defaultTimeoutMs: this.options.jobTimeoutMs,
        maxTimeoutMs: this.options.maxJobTimeoutMs,
      },
      emit: (event, ...args) => this.emit(event, ...args),
      // "nq-" tells cancelJob that a nimbusq worker holds the lock (it may mark it; a BullMQ one it leaves).
      nextToken: () => `nq-${this.id}:${++this.sequence}`,
      carried: [],
    };
  }

  private strategies(): Record<string, BackoffStrategy> | undefined {
    const fallback = this.options.settings?.backoffStrategy;
    if (!fallback) return this.options.backoffStrategies;
    return new Proxy(this.options.backoffStrategies ?? {}, {
      get: (target, key: string) => target[key] ?? fallback,
    });
  }

  /**
   * Keeps draining until `signal` fires: when idle it polls with a backoff (never a blocking command),
   * waking earlier when a delayed job or the rate limit is due.
   */
  async run(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.lifecycle.assertOpen("run");
    const { signal, release } = linkSignals(this.stopping.signal, options.signal);
    try {
      await this.track(this.poll(signal));
    } finally {
      release();
    }
  }

  private poll(signal: AbortSignal): Promise<void> {
    return pollDrains((drainSignal) => this.drain({ signal: drainSignal }), signal, {
      minMs: this.options.poll?.minMs ?? 100,
      maxMs: this.options.poll?.maxMs ?? 5000,
      clock: () => this.clock(),
      onError: (error) => this.emit("error", error),
    });
  }
}
