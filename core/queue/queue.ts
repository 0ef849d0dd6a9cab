/**
 * A queue, as BullMQ's Queue: adds jobs, reads them (getters with BullMQ's names and orders; a large
 * range in pages of short calls) and maintains the queue (clean, drain, obliterate, retryJobs,
 * promoteJobs, rate limit, global concurrency, metrics), over a Redis HTTP client. Every write is one
 * atomic script call that is safe to replay; the methods are thin calls into the room's modules, so
 * the class stays one class, as BullMQ's, rather than split to meet a line count.
 */

import { type AddedJob, placementOf, writeJobs, writeSettings } from "../adds/add-jobs.ts";
import type { AddOutcome, NewJob } from "../adds/add-types.ts";
import { checkWake, wakeAfterAdd } from "../adds/add-wake.ts";
import { addHandingOver, checkHandoff, handoffFields, idBlocksFor } from "../adds/handoff.ts";
import type { QueueOptions } from "../adds/queue-options.ts";
import { type RedriveOptions, redrive } from "../dead-letter/redrive.ts";
import { type CancelResult, cancelJob } from "../job/cancel.ts";
import { Job } from "../job/job.ts";
import { type RemoveOptions, removeJobWithChildren } from "../job/job-moves.ts";
import { decodePauseQueue, decodeTrimEvents, pauseQueue, trimEvents } from "../redis/generated/scripts.ts";
import { checkJobTargets } from "../redis/hash-slot.ts";
import { defaultPrefix, queueQualifiedName } from "../redis/keys.ts";
import { Lifecycle, redisPortFrom } from "../redis/lifecycle.ts";
import { runScript } from "../redis/scripts.ts";
import { isShardMap } from "../redis/shard-map.ts";
import * as schedulers from "../schedulers/job-schedulers.ts";
import { tracedAdd } from "../telemetry/telemetry.ts";
import type { BulkJob, JobSchedulerTemplate, JobsOptions, RepeatOptions } from "../types.ts";
import {
  Checker,
  checkJobName,
  checkJobOptions,
  checkPrefix,
  checkQueueName,
  defaultMaxDataBytes,
  serializeData,
} from "../validate.ts";
import * as maintenance from "./maintenance.ts";
import { QueueGetters } from "./queue-getters.ts";
import * as settings from "./queue-settings.ts";

/**
 * A queue in BullMQ 6's layout.
 *
 * @example
 * const queue = new Queue("email", { redis: createRedis() });
 * await queue.add("welcome", { to: "a@example.com" }, { attempts: 3, backoff: { type: "exponential", delay: 1000 } });
 */
export class Queue<TData = unknown> extends QueueGetters<TData> {
  private readonly options: QueueOptions;
  private readonly lifecycle: Lifecycle;

  constructor(name: string, options: QueueOptions) {
    const queueName = checkQueueName(name);
    const context = `Queue "${queueName}"`;
    const lifecycle = new Lifecycle(context);
    const port = redisPortFrom(options, context, { signal: lifecycle.closingSignal }, queueName);
    const prefix = checkPrefix(options.prefix ?? defaultPrefix);
    const checked = checkHandoff(checkWake(options, context), context);
    super(queueName, prefix, {
      port: lifecycle.guard(port),
      prefix,
      queueName,
      clock: options.clock ?? Date.now,
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
      ...(isShardMap(options.redis) ? { shards: options.redis } : {}),
    });
    this.options = checked;
    this.lifecycle = lifecycle;
  }

  /** `<prefix>:<queueName>`, the value a child's `parent.queue` names. */
  get qualifiedName(): string {
    return queueQualifiedName(this.prefix, this.name);
  }

  /** @internal Validates one job and shapes it for the add script. */
  prepare(name: string, data: unknown, opts: JobsOptions | undefined, field: string, now: number): NewJob {
    const check = new Checker(`Queue "${this.name}": add`);
    const merged = checkJobOptions(
      check,
      `${field}opts`,
      { ...this.options.defaultJobOptions, ...opts },
      now,
    );
    checkJobName(check, `${field}name`, name);
    checkJobTargets(check, field, this.context, merged);
    const limit = Math.min(
      this.options.maxDataBytes ?? defaultMaxDataBytes,
      merged.sizeLimit ?? Number.POSITIVE_INFINITY,
    );
    const dataText = serializeData(check, `${field}data`, data, limit);
    const { jobId, ...stored } = merged;
    return {
      prefix: this.prefix,
      queueName: this.name,
      customId: jobId ?? "",
      name,
      data,
      dataText,
      opts: jobId === undefined ? stored : { ...stored, jobId },
      timestamp: merged.timestamp ?? now,
      placement: placementOf(merged, false),
    };
  }

  /** @internal The Job object for a job this process just wrote. */
  jobFromNew(job: NewJob, id: string): Job<TData> {
    return new Job<TData>(this.context, id, {
      name: job.name,
      data: JSON.parse(job.dataText) as TData,
      opts: job.opts as Record<string, unknown>,
      timestamp: job.timestamp,
      delay: job.opts.delay ?? 0,
      priority: job.opts.priority ?? 0,
    });
  }

  /** Adds one job. An existing custom `jobId` returns that job unchanged (and emits `duplicated`). */
  async add(name: string, data: TData, opts?: JobsOptions): Promise<Job<TData>> {
    const [job] = (await this.addBulk([{ name, data, opts }])) as [Job<TData>];
    this.emit("waiting", job);
    return job;
  }

  /** Adds many jobs, all or nothing: one script call while they fit (1,000 small jobs), else staged and committed at once. */
  async addBulk(jobs: BulkJob<TData>[]): Promise<Job<TData>[]> {
    return (await this.addBulkWithOutcomes(jobs)).map((added) => added.job);
  }

  /**
   * As `addBulk`, also saying of each job whether it was `created`, `duplicated` (its custom id
   * existed: the Job carries the given fields, not the stored ones) or `deduplicated`.
   */
  async addBulkWithOutcomes(jobs: BulkJob<TData>[]): Promise<AddedJob<TData>[]> {
    const check = new Checker(`Queue "${this.name}": addBulk`);
    if (!Array.isArray(jobs)) check.fail("jobs", "an array", jobs);
    const now = this.context.clock();
    const prepared = jobs.map((job, i) => {
      if (typeof job !== "object" || job === null)
        check.fail(`jobs[${i}]`, "an object { name, data, opts }", job);
      return this.prepare(job.name, job.data, job.opts, jobs.length === 1 ? "" : `jobs[${i}].`, now);
    });
    if (prepared.length === 0) return [];
    const { handoff } = this.options;
    const lone = prepared[0] as NewJob;
    const fields = prepared.length === 1 && handoff ? handoffFields(lone, now) : undefined;
    const settings = writeSettings(this.options, now);
    const write =
      fields && handoff
        ? () => addHandingOver(this.port, lone, fields, settings, handoff, idBlocksFor(this.options.redis))
        : () => writeJobs(this.port, prepared, settings);
    const outcomes = this.options.telemetry
      ? await tracedAdd(this.options.telemetry, this.name, prepared, write)
      : await write();
    if (!fields) await wakeAfterAdd(this.options.wake, this.name, prepared, outcomes, now);
    return prepared.map((job, i) => {
      const { id, outcome, handoff: taken } = outcomes[i] as AddOutcome;
      return { job: this.jobFromNew(job, id), outcome, ...(taken ? { handoff: taken } : {}) };
    });
  }

  /**
   * Removes a job (with its children unless `removeChildren: false`), as BullMQ's `queue.remove`;
   * refused with JobLockedError while a worker holds it. A job that does not exist is no error.
   */
  async remove(id: string, opts?: RemoveOptions): Promise<void> {
    new Checker(`Queue "${this.name}": remove`).string("id", id);
    await removeJobWithChildren(this.context, id, opts);
    this.emit("removed", id);
  }

  private get schedulers(): schedulers.SchedulerHost {
    return { context: this.context, options: this.options };
  }

  /**
   * Creates a job scheduler, or updates it (replacing its pending iteration), as BullMQ's
   * `upsertJobScheduler`: a cron `pattern` in `tz`, or `every` ms. Returns the iteration job it
   * created, or undefined when the pattern has no run left before `endDate`.
   */
  upsertJobScheduler(id: string, repeat: RepeatOptions, template?: JobSchedulerTemplate<TData>) {
    return schedulers.upsertScheduler<TData>(this.schedulers, id, repeat, template);
  }

  /** A scheduler as BullMQ's `getJobScheduler` returns it; undefined when there is none. */
  getJobScheduler(id: string) {
    return schedulers.getScheduler<TData>(this.schedulers, id);
  }

  /** Schedulers ordered by next run, latest first unless `asc` (BullMQ's `getJobSchedulers`). */
  getJobSchedulers(start = 0, end = -1, asc = false) {
    return schedulers.listSchedulers<TData>(this.schedulers, start, end, asc);
  }

  getJobSchedulersCount(): Promise<number> {
    return schedulers.countSchedulers(this.schedulers);
  }

  /** Removes a scheduler (and its pending iteration while delayed); true when it existed. */
  removeJobScheduler(id: string): Promise<boolean> {
    return schedulers.removeScheduler(this.schedulers, id);
  }

  /** Pauses the queue for every worker (BullMQ's global pause: only `meta.paused` changes). */
  async pause(): Promise<void> {
    decodePauseQueue(await runScript(this.port, pauseQueue, this.keys, { pause: "1" }));
    this.emit("paused");
  }

  /**
   * Resumes the queue; a legacy (5.x) paused list moves into wait first, one bounded call at a time
   * (a pause meanwhile ends it, the queue paused).
   */
  async resume(): Promise<void> {
    for (let pause: "0" | "2" = "0"; ; pause = "2") {
      const { left } = decodePauseQueue(await runScript(this.port, pauseQueue, this.keys, { pause }));
      if (left === 0) return this.emit("resumed");
    }
  }

  async isPaused(): Promise<boolean> {
    const meta = await this.port.hgetall(this.keys.meta);
    for (let i = 0; i < meta.length; i += 2) if (meta[i] === "paused") return true;
    return false;
  }

  /** Cancels job `id` wherever it is: waiting, it fails now; running, it is aborted (core/job/cancel.ts). */
  cancelJob(id: string, reason?: string): Promise<CancelResult> {
    return cancelJob(this.context, id, reason, writeSettings(this.options, 0));
  }

  /** Moves this queue's dead letters back into it as new jobs (see core/dead-letter/redrive.ts). */
  redrive(options?: RedriveOptions) {
    return redrive(this.context, writeSettings(this.options, this.context.clock()), options);
  }

  /** Trims the events to about `maxLength` (BullMQ's `trimEvents`); returns how many went. */
  async trimEvents(maxLength: number): Promise<number> {
    new Checker(`Queue "${this.name}": trimEvents`).integer("maxLength", maxLength, 0);
    return decodeTrimEvents(await runScript(this.port, trimEvents, this.keys, { maxLength })).removed;
  }

  /**
   * Resolves once Redis answered one read of the queue (a wrong URL or token rejects here), as
   * BullMQ's `waitUntilReady`; there is no connection to open, every call is an HTTP request.
   */
  async waitUntilReady(): Promise<void> {
    await this.port.hgetall(this.keys.meta);
  }

  /**
   * BullMQ's `close()`: idempotent; afterwards every call of this queue (and of the jobs it returned)
   * is refused with a ClosedError. Nothing is held open, so nothing else needs releasing.
   */
  close(): Promise<void> {
    return this.lifecycle.close();
  }

  /** The close under way or done, undefined while open (BullMQ's `closing`). */
  get closing(): Promise<void> | undefined {
    return this.lifecycle.closing;
  }

  /**
   * Deletes the jobs of one state whose time (finishedOn, else processedOn, else timestamp) is at
   * least `grace` ms old, at most `limit` (0 for all), in bounded steps, and returns their ids; a
   * scheduler's current iteration and active jobs a worker holds stay. One `cleaned {count}` event.
   *
   * @example
   * await queue.clean(24 * 3600_000, 0, "completed"); // completed more than a day ago
   */
  async clean(grace: number, limit: number, state: maintenance.CleanState = "completed"): Promise<string[]> {
    const ids = await maintenance.clean(this.context, grace, limit, state);
    this.emit("cleaned", ids, state);
    return ids;
  }

  /**
   * Deletes every waiting and prioritized job (and delayed ones with `delayed`), but a job
   * scheduler's current iteration; no events. Returns how many went.
   */
  drain(delayed = false): Promise<number> {
    return maintenance.drain(this.context, delayed);
  }

  /**
   * Pauses the queue and deletes it with all its jobs and keys. Refused (QueueStateError) while jobs
   * are active unless `force`.
   */
  obliterate(opts?: maintenance.ObliterateOptions): Promise<void> {
    return maintenance.obliterate(this.context, opts);
  }

  /** Retries every failed (or completed) job, back to wait; returns how many. */
  retryJobs(opts?: maintenance.RetryJobsOptions): Promise<number> {
    return maintenance.retryJobs(this.context, opts);
  }

  /** Makes every delayed job ready now; returns how many. */
  promoteJobs(opts?: maintenance.PromoteJobsOptions): Promise<number> {
    return maintenance.promoteJobs(this.context, opts);
  }

  /** Holds every worker of the queue back for `ms` ms (BullMQ's manual rate limit). */
  rateLimit(ms: number): Promise<void> {
    return settings.rateLimit(this.context, ms);
  }

  /** Ends the rate limit now (BullMQ's `removeRateLimitKey`); 1 when one was set. */
  removeRateLimitKey(): Promise<number> {
    return settings.removeRateLimitKey(this.context);
  }

  /** The ms the rate limit still holds (see BullMQ's `getRateLimitTtl`). */
  getRateLimitTtl(maxJobs?: number): Promise<number> {
    return settings.getRateLimitTtl(this.context, maxJobs);
  }

  setGlobalConcurrency(concurrency: number): Promise<void> {
    return settings.setGlobalConcurrency(this.context, concurrency);
  }

  removeGlobalConcurrency(): Promise<void> {
    return settings.removeGlobalConcurrency(this.context);
  }

  getGlobalConcurrency(): Promise<number | null> {
    return settings.getGlobalConcurrency(this.context);
  }

  setGlobalRateLimit(max: number, duration: number): Promise<void> {
    return settings.setGlobalRateLimit(this.context, max, duration);
  }

  removeGlobalRateLimit(): Promise<void> {
    return settings.removeGlobalRateLimit(this.context);
  }

  getGlobalRateLimit(): Promise<{ max: number; duration: number } | null> {
    return settings.getGlobalRateLimit(this.context);
  }

  /** The id of the job that owns a deduplication window, or null. */
  getDeduplicationJobId(id: string): Promise<string | null> {
    return settings.getDeduplicationJobId(this.context, id);
  }

  /** Ends a deduplication window, whichever job owns it; 1 when there was one. */
  removeDeduplicationKey(id: string): Promise<number> {
    return settings.removeDeduplicationKey(this.context, id);
  }

  /** What BullMQ workers with `metrics` on recorded for completed or failed jobs. */
  getMetrics(type: "completed" | "failed", start = 0, end = -1): Promise<settings.Metrics> {
    return settings.getMetrics(this.context, type, start, end);
  }
}
