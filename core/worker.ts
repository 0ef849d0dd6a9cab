/**
 * A worker: lease a batch → run the processor on each job with a concurrency limit, extending the
 * leases while they run → ack the batch in one call. `drain` stops when nothing is ready (one
 * invocation of a serverless function); `run` keeps polling, without blocking commands, until its
 * signal fires (a container).
 */
import type { ActiveJob } from "./active-job.ts";
import type { BackoffStrategy } from "./backoff.ts";
import { checkWorkerDeadLetter } from "./dead-letter.ts";
import { Emitter } from "./emitter.ts";
import { LeaseLostError, RateLimitError } from "./errors.ts";
import { setRateLimit } from "./generated/scripts.ts";
import type { JobLocation } from "./job.ts";
import { defaultMaxLenEvents, queueKeys } from "./keys.ts";
import { type AckEntry, type Decision, decide, type OutcomeSettings, refusedCompletion } from "./outcome.ts";
import { toRedisPort } from "./redis-port.ts";
import { runBatch } from "./run-batch.ts";
import { withNextIterations } from "./scheduler-iterations.ts";
import {
  type DrainOptions,
  type DrainSummary,
  type Processor,
  sleep,
  type WorkerEvents,
  type WorkerOptions,
} from "./worker-types.ts";

export type {
  DrainOptions,
  DrainSummary,
  Processor,
  StopReason,
  WorkerEvents,
  WorkerOptions,
} from "./worker-types.ts";

import { runScript } from "./scripts.ts";
import { Checker, checkPrefix, checkQueueName } from "./validate.ts";
import { type AckResult, ackBatch, extendBatch, leaseBatch, runStalledCheck } from "./worker-calls.ts";

export class Worker<TData = unknown, TResult = unknown> extends Emitter<WorkerEvents> {
  readonly name: string;
  readonly location: JobLocation;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  private readonly id = crypto.randomUUID();
  private sequence = 0;

  constructor(
    queueName: string,
    readonly processor: Processor<TData, TResult>,
    readonly options: WorkerOptions,
  ) {
    super();
    const check = new Checker(`Worker "${queueName}"`);
    this.name = checkQueueName(queueName, `Worker "${queueName}"`);
    this.batchSize = check.integer("batchSize", options.batchSize ?? 10, 1, 1000);
    this.concurrency = check.integer("concurrency", options.concurrency ?? this.batchSize, 1, 1000);
    this.leaseMs = check.integer("leaseMs", options.leaseMs ?? 30_000, 1000);
    if (typeof processor !== "function") check.fail("processor", "a function (job) => result", processor);
    checkWorkerDeadLetter(check, options.deadLetter, queueName, options.prefix ?? "bull");
    if (options.limiter) {
      check.integer("limiter.max", options.limiter.max, 1);
      check.integer("limiter.duration", options.limiter.duration, 1);
    }
    this.location = {
      port: toRedisPort(options.redis),
      prefix: checkPrefix(options.prefix ?? "bull", `Worker "${queueName}"`),
      queueName,
      clock: options.clock ?? Date.now,
    };
  }

  private clock(): number {
    return this.location.clock();
  }

  /** Makes every worker of the queue wait `ms` before leasing (then throw RateLimitError). */
  async rateLimit(ms: number): Promise<void> {
    new Checker(`Worker "${this.name}": rateLimit`).integer("ms", ms, 1);
    const keys = queueKeys(this.location.prefix, this.name);
    await runScript(this.location.port, setRateLimit, { limiter: keys.limiter }, { ms });
  }

  /** BullMQ's stalled check for this queue; returns the requeued ids (empty when it ran recently). */
  async recoverStalled(): Promise<string[]> {
    const moved = await runStalledCheck(this.location, {
      stalledInterval: this.options.stalledInterval ?? 30_000,
      maxStalledCount: this.options.maxStalledCount ?? 1,
    });
    for (const id of moved ?? []) this.emit("stalled", id, "active");
    return moved ?? [];
  }

  /**
   * Leases and runs batches until nothing is ready, the deadline (epoch ms) is near, the queue is
   * paused or rate limited, or the signal fires.
   */
  async drain(options: DrainOptions = {}): Promise<DrainSummary> {
    const summary: DrainSummary = {
      leased: 0,
      completed: 0,
      failed: 0,
      retried: 0,
      delayed: 0,
      handedBack: 0,
      lostLeases: 0,
      stoppedBecause: "empty",
    };
    const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    for (;;) {
      if (options.signal?.aborted) return { ...summary, stoppedBecause: "aborted" };
      const room = deadline - this.clock();
      const reserve =
        options.reserveMs ?? Math.min(this.leaseMs, this.options.jobTimeoutMs ?? this.leaseMs) / 10;
      if (room <= reserve) {
        return { ...summary, stoppedBecause: "deadline" };
      }
      const token = `${this.id}:${++this.sequence}`;
      const lease = await leaseBatch(this.location, {
        token,
        count: this.batchSize,
        leaseMs: this.leaseMs,
        limiterMax: this.options.limiter?.max ?? 0,
        limiterDuration: this.options.limiter?.duration ?? 0,
        workerName: this.options.name ?? "",
      });
      if (lease.status === "paused") return { ...summary, stoppedBecause: "paused" };
      if (lease.status === "rate-limited") {
        return { ...summary, stoppedBecause: "rate-limited", nextDueAt: this.clock() + lease.info };
      }
      if (lease.status === "maxed" || lease.jobs.length === 0) {
        const nextDueAt = lease.info > 0 ? lease.info : undefined;
        if (lease.status === "leased") this.emit("drained");
        return { ...summary, stoppedBecause: "empty", ...(nextDueAt ? { nextDueAt } : {}) };
      }
      summary.leased += lease.jobs.length;
      const maxLen = this.options.streams?.events?.maxLen ?? defaultMaxLenEvents;
      const jobs = await withNextIterations(this.location, lease.jobs, maxLen, (e) => this.emit("error", e));
      const after = await this.processBatch(jobs, token, deadline, options.signal, summary);
      if (after.rateLimited) return { ...summary, stoppedBecause: "rate-limited" };
      // The ack saw nothing left to take: stop here instead of paying for an empty lease.
      if (!after.readyLeft) {
        this.emit("drained");
        return {
          ...summary,
          stoppedBecause: "empty",
          ...(after.nextDue > 0 ? { nextDueAt: after.nextDue } : {}),
        };
      }
    }
  }

  /** Runs one leased batch and acks it. */
  private async processBatch(
    jobs: ActiveJob[],
    token: string,
    deadline: number,
    signal: AbortSignal | undefined,
    summary: DrainSummary,
  ): Promise<{ rateLimited: boolean; readyLeft: boolean; nextDue: number }> {
    for (const job of jobs) {
      job.hooks = { onProgress: (j, progress) => this.emit("progress", j, progress) };
    }
    const lost = new Set<string>();
    const settledJobs = await runBatch(jobs, {
      processor: this.processor as Processor,
      concurrency: this.concurrency,
      deadline,
      signal,
      clock: () => this.clock(),
      defaultTimeoutMs: this.options.jobTimeoutMs,
      maxTimeoutMs: this.options.maxJobTimeoutMs,
      extendEveryMs: Math.floor(this.leaseMs / 3),
      onStart: (job) => this.emit("active", job, "waiting"),
      extend: async (running) => {
        try {
          for (const id of await extendBatch(this.location, running, this.leaseMs)) lost.add(id);
        } catch (error) {
          this.emit("error", error as Error);
        }
        return lost;
      },
    });
    const settings: OutcomeSettings = {
      now: this.clock(),
      removeOnComplete: this.options.removeOnComplete,
      removeOnFail: this.options.removeOnFail,
      backoffStrategies: this.strategies(),
      random: this.options.random,
      deadLetter: this.options.deadLetter,
    };
    const decisions = new Map<ActiveJob, Decision>();
    for (const [job, settled] of settledJobs) {
      if (!lost.has(job.id)) decisions.set(job, decide(job, settled, settings));
    }
    summary.lostLeases += lost.size;
    for (const id of lost)
      this.emit("error", new LeaseLostError(`lease lost on job "${id}" in queue "${this.name}"`));
    let rateLimited = false;
    let ack: AckResult = { codes: [], readyLeft: true, nextDue: 0 };
    // A second round only for completions refused because of the job's children, now failures.
    let toAck = [...decisions].filter(([, decision]) => decision.entry);
    for (let round = 0; toAck.length > 0; round++) {
      ack = await ackBatch(
        this.location,
        toAck.map(([, decision]) => decision.entry as AckEntry),
        round === 0 ? token : `${token}:refused`,
        this.options.streams?.events?.maxLen,
      );
      const refused: [ActiveJob, Decision][] = [];
      for (const [i, [job, decision]] of toAck.entries()) {
        const code = ack.codes[i] ?? 0;
        if ((code === -4 || code === -9) && decision.result === "completed") {
          refused.push([job, refusedCompletion(job, code, settings)]);
          continue;
        }
        if (code !== 1) {
          summary.lostLeases += 1;
          this.emit(
            "error",
            new LeaseLostError(`ack refused (code ${code}) for job "${job.id}" in queue "${this.name}"`),
          );
          continue;
        }
        this.report(job, decision, summary);
        if (decision.result === "handed-back" && settledJobs.get(job)?.kind === "threw") {
          const error = (settledJobs.get(job) as { error: Error }).error;
          if (error instanceof RateLimitError) rateLimited = true;
        }
      }
      toAck = refused;
    }
    return { rateLimited, readyLeft: ack.readyLeft, nextDue: ack.nextDue };
  }

  private strategies(): Record<string, BackoffStrategy> | undefined {
    const fallback = this.options.settings?.backoffStrategy;
    if (!fallback) return this.options.backoffStrategies;
    return new Proxy(this.options.backoffStrategies ?? {}, {
      get: (target, key: string) => target[key] ?? fallback,
    });
  }

  private report(job: ActiveJob, decision: Decision, summary: DrainSummary): void {
    switch (decision.result) {
      case "completed":
        summary.completed += 1;
        job.returnvalue = decision.returnValue;
        this.emit("completed", job, decision.returnValue, "active");
        break;
      case "failed":
        summary.failed += 1;
        this.emit("failed", job, decision.error as Error, "active");
        break;
      case "retried":
        summary.retried += 1;
        this.emit("failed", job, decision.error as Error, "active");
        break;
      case "delayed":
        summary.delayed += 1;
        break;
      case "handed-back":
        summary.handedBack += 1;
        break;
      case "waiting-children":
        break;
    }
  }

  /**
   * Keeps draining until `signal` fires: when idle it polls with a backoff (never a blocking command),
   * waking earlier when a delayed job or the rate limit is due.
   */
  async run(options: { signal: AbortSignal }): Promise<void> {
    const minMs = this.options.poll?.minMs ?? 100;
    const maxMs = this.options.poll?.maxMs ?? 5000;
    let idleMs = minMs;
    while (!options.signal.aborted) {
      let summary: DrainSummary;
      try {
        summary = await this.drain({ signal: options.signal });
      } catch (error) {
        this.emit("error", error as Error);
        summary = { stoppedBecause: "empty" } as DrainSummary;
      }
      if (options.signal.aborted) break;
      if (summary.leased > 0 && summary.stoppedBecause === "empty") {
        idleMs = minMs;
        continue;
      }
      let wait = idleMs;
      if (summary.nextDueAt) wait = Math.min(wait, Math.max(summary.nextDueAt - this.clock(), 0));
      idleMs = Math.min(idleMs * 2, maxMs);
      await sleep(wait, options.signal);
    }
  }
}
