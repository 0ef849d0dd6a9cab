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
import type { QueueOptions } from "../adds/queue-options.ts";
import { type RedriveOptions, redrive } from "../dead-letter/redrive.ts";
import { NotSupportedError, UnexpectedReplyError } from "../errors.ts";
import { Job } from "../job/job.ts";
import { type RemoveOptions, removeJobWithChildren } from "../job/job-moves.ts";
import { readJobPages } from "../job/job-pages.ts";
import { defaultJobTypes, jobStructures, pendingJobTypes } from "../job/job-structures.ts";
import {
  decodeGetJobCounts,
  decodeGetJobLogs,
  decodeGetJobStates,
  decodePauseQueue,
  decodeTrimEvents,
  getJobCounts,
  getJobLogs,
  getJobStates,
  pauseQueue,
  trimEvents,
} from "../redis/generated/scripts.ts";
import { checkJobTargets } from "../redis/hash-slot.ts";
import {
  attentionKey,
  defaultPrefix,
  jobKey,
  jobSubKeys,
  queueKeys,
  queueQualifiedName,
} from "../redis/keys.ts";
import { Lifecycle, redisPortFrom } from "../redis/lifecycle.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
import * as schedulers from "../schedulers/job-schedulers.ts";
import { tracedAdd } from "../telemetry/telemetry.ts";
import type {
  BulkJob,
  JobSchedulerTemplate,
  JobState,
  JobsOptions,
  JobType,
  RepeatOptions,
} from "../types.ts";
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
import * as settings from "./queue-settings.ts";

/**
 * A queue in BullMQ 6's layout.
 *
 * @example
 * const queue = new Queue("email", { redis: createRedis() });
 * await queue.add("welcome", { to: "a@example.com" }, { attempts: 3, backoff: { type: "exponential", delay: 1000 } });
 */
export class Queue<TData = unknown> {
  readonly name: string;
  readonly prefix: string;
  /** The queue's keys, and the sweeper's attention index its pause and resume note. */
  readonly keys: ReturnType<typeof queueKeys> & { attention: string };
  private readonly port: RedisPort;
  private readonly options: QueueOptions;
  private readonly lifecycle: Lifecycle;
  /** @internal Where the queue's jobs live. */
  private readonly context: QueueContext;

  constructor(name: string, options: QueueOptions) {
    this.name = checkQueueName(name);
    this.lifecycle = new Lifecycle(`Queue "${this.name}"`);
    const port = redisPortFrom(options, `Queue "${this.name}"`, { signal: this.lifecycle.closingSignal });
    this.prefix = checkPrefix(options.prefix ?? defaultPrefix);
    this.options = checkWake(options, `Queue "${this.name}"`);
    this.port = this.lifecycle.guard(port);
    this.keys = { ...queueKeys(this.prefix, this.name), attention: attentionKey(this.prefix) };
    this.context = {
      port: this.port,
      prefix: this.prefix,
      queueName: this.name,
      clock: options.clock ?? Date.now,
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    };
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
    checkJobTargets(check, field, { prefix: this.prefix, queueName: this.name }, merged);
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
    const [job] = await this.addBulk([{ name, data, opts }]);
    return job as Job<TData>;
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
    if (!Array.isArray(jobs)) new Checker(`Queue "${this.name}": addBulk`).fail("jobs", "an array", jobs);
    const now = this.context.clock();
    const prepared = jobs.map((job, i) => {
      if (typeof job !== "object" || job === null) {
        new Checker(`Queue "${this.name}": addBulk`).fail(
          `jobs[${i}]`,
          "an object { name, data, opts }",
          job,
        );
      }
      return this.prepare(job.name, job.data, job.opts, jobs.length === 1 ? "" : `jobs[${i}].`, now);
    });
    if (prepared.length === 0) return [];
    const write = () => writeJobs(this.port, prepared, writeSettings(this.options, now));
    const outcomes = this.options.telemetry
      ? await tracedAdd(this.options.telemetry, this.name, prepared, write)
      : await write();
    await wakeAfterAdd(this.options.wake, this.name, prepared, outcomes, now);
    return prepared.map((job, i) => {
      const { id, outcome } = outcomes[i] as AddOutcome;
      return { job: this.jobFromNew(job, id), outcome };
    });
  }

  /**
   * Removes a job (with its children unless `removeChildren: false`), as BullMQ's `queue.remove`;
   * refused with JobLockedError while a worker holds it. A job that does not exist is no error.
   */
  async remove(id: string, opts?: RemoveOptions): Promise<void> {
    new Checker(`Queue "${this.name}": remove`).string("id", id);
    await removeJobWithChildren(this.context, id, opts);
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
  }

  /**
   * Resumes the queue; a legacy (5.x) paused list moves into wait first, one bounded call at a time
   * (a pause meanwhile ends it, the queue paused).
   */
  async resume(): Promise<void> {
    for (let pause = "0"; ; pause = "2") {
      const { left } = decodePauseQueue(await runScript(this.port, pauseQueue, this.keys, { pause }));
      if (left === 0) return;
    }
  }

  async isPaused(): Promise<boolean> {
    const meta = await this.port.hgetall(this.keys.meta);
    for (let i = 0; i < meta.length; i += 2) if (meta[i] === "paused") return true;
    return false;
  }

  /** Moves this queue's dead letters back into it as new jobs (see core/dead-letter/redrive.ts). */
  redrive(options?: RedriveOptions) {
    return redrive(this.context, writeSettings(this.options, this.context.clock()), options);
  }

  /**
   * Trims the event stream to about `maxLength` entries (BullMQ's `trimEvents`); returns how many
   * went. Workers and adds already keep it near `streams.events.maxLen`.
   */
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

  /** Reads a job; undefined when it does not exist. */
  async getJob(id: string): Promise<Job<TData> | undefined> {
    const flat = await this.port.hgetall(jobKey(this.prefix, this.name, id));
    return Job.fromFlat<TData>(this.context, id, flat);
  }

  /** A job and its state, read together in one call so they agree; undefined when it does not exist. */
  getJobWithState(id: string): Promise<{ job: Job<TData>; state: JobState } | undefined> {
    return Job.readWithState<TData>(this.context, id);
  }

  /**
   * Counts by type, keyed by the type names asked for (BullMQ keeps `wait` as `wait`); with no types,
   * BullMQ 6's default set (no `paused`).
   */
  async getJobCounts(...types: JobType[]): Promise<Record<string, number>> {
    const structures = jobStructures(
      this.keys,
      types.length > 0 ? types : defaultJobTypes,
      `Queue "${this.name}": getJobCounts`,
      true,
    );
    const { counts } = decodeGetJobCounts(
      await runScript(
        this.port,
        getJobCounts,
        { structures: structures.map((s) => ({ key: s.key })) },
        { structures: structures.map((s) => ({ kind: s.kind })) },
      ),
    );
    if (counts.length !== structures.length)
      throw new UnexpectedReplyError(`getJobCounts of queue "${this.name}": unexpected reply`);
    return Object.fromEntries(structures.map((s, i) => [s.type, counts[i] as number]));
  }

  /**
   * Total of the given types; with none, of the jobs still to be processed (waiting, delayed,
   * prioritized, waiting-children), as BullMQ's `count()`.
   */
  async count(...types: JobType[]): Promise<number> {
    const counts = await this.getJobCounts(...(types.length > 0 ? types : pendingJobTypes));
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  }

  /**
   * Jobs of the given types; `start`/`end` index each type's range, `asc` lists lists in processing
   * order and sets by ascending score, as BullMQ's `getJobs`. A large range is read in pages, each one
   * short script call (core/job/job-pages.ts).
   */
  async getJobs(types: JobType | JobType[] = [], start = 0, end = -1, asc = false): Promise<Job<TData>[]> {
    const list = typeof types === "string" ? [types] : types.length > 0 ? types : defaultJobTypes;
    const check = new Checker(`Queue "${this.name}": getJobs`);
    check.integer("start", start, 0);
    check.integer("end", end, -1);
    const structures = jobStructures(this.keys, list as string[], `Queue "${this.name}": getJobs`);
    return await readJobPages<TData>(this.context, structures, start, end, asc);
  }

  /** BullMQ's `getJobCountByTypes`: the total of the given types, as `count(...types)`. */
  getJobCountByTypes(...types: JobType[]): Promise<number> {
    return this.count(...(types.length > 0 ? types : defaultJobTypes));
  }
  /** BullMQ's one-type counts, each one call. */
  getWaitingCount(): Promise<number> {
    return this.count("waiting");
  }
  getActiveCount(): Promise<number> {
    return this.count("active");
  }
  getDelayedCount(): Promise<number> {
    return this.count("delayed");
  }
  getPrioritizedCount(): Promise<number> {
    return this.count("prioritized");
  }
  getCompletedCount(): Promise<number> {
    return this.count("completed");
  }
  getFailedCount(): Promise<number> {
    return this.count("failed");
  }
  getWaitingChildrenCount(): Promise<number> {
    return this.count("waiting-children");
  }

  getWaiting(start = 0, end = -1): Promise<Job<TData>[]> {
    return this.getJobs(["waiting"], start, end, true);
  }
  getActive(start = 0, end = -1): Promise<Job<TData>[]> {
    return this.getJobs(["active"], start, end, true);
  }
  getDelayed(start = 0, end = -1): Promise<Job<TData>[]> {
    return this.getJobs(["delayed"], start, end, true);
  }
  getPrioritized(start = 0, end = -1): Promise<Job<TData>[]> {
    return this.getJobs(["prioritized"], start, end, true);
  }
  getCompleted(start = 0, end = -1): Promise<Job<TData>[]> {
    return this.getJobs(["completed"], start, end, false);
  }
  getFailed(start = 0, end = -1): Promise<Job<TData>[]> {
    return this.getJobs(["failed"], start, end, false);
  }
  getWaitingChildren(start = 0, end = -1): Promise<Job<TData>[]> {
    return this.getJobs(["waiting-children"], start, end, true);
  }

  /**
   * A job's state (BullMQ's `getJobState`): completed, failed, delayed, prioritized, active,
   * waiting, waiting-children, or unknown when there is no such job.
   */
  async getJobState(id: string): Promise<JobState> {
    const check = new Checker(`Queue "${this.name}": getJobState`);
    check.string("id", id);
    const { states } = decodeGetJobStates(
      await runScript(this.port, getJobStates, this.keys, { prefix: "", jobs: [{ id }] }),
      ["states"],
    );
    if (states.length !== 1)
      throw new UnexpectedReplyError(`getJobState of job "${id}" in queue "${this.name}": unexpected reply`);
    return states[0] as JobState;
  }

  /**
   * A job's log lines from `start` to `end` (inclusive, -1 for the last), oldest first unless `asc` is
   * false, and how many it has in all — BullMQ's `getJobLogs`.
   *
   * @example
   * const { logs, count } = await queue.getJobLogs("42", 0, 9); // the first ten lines
   */
  async getJobLogs(id: string, start = 0, end = -1, asc = true): Promise<{ logs: string[]; count: number }> {
    const check = new Checker(`Queue "${this.name}": getJobLogs`);
    check.string("id", id);
    check.integer("start", start, 0);
    check.integer("end", end, -1);
    // Newest first reads the same range counted from the end, then reverses it (as BullMQ does).
    const [from, to] = asc ? [start, end] : [-(end + 1), -(start + 1)];
    const { lines, total } = decodeGetJobLogs(
      await runScript(
        this.port,
        getJobLogs,
        { logs: jobSubKeys(jobKey(this.prefix, this.name, id)).logs },
        { from, to },
      ),
    );
    return { logs: asc ? lines : lines.reverse(), count: total };
  }

  /**
   * Not available: BullMQ lists workers from Redis's CLIENT LIST, and nimbusq's workers hold no Redis
   * connection (every call is an HTTP request). The sweeper's registry knows the serverless workers.
   */
  getWorkers(): Promise<never> {
    return Promise.reject(
      new NotSupportedError(
        `Queue "${this.name}": getWorkers reads Redis client connections (CLIENT LIST); nimbusq's workers talk HTTP and hold none`,
      ),
    );
  }

  /** Not available, as `getWorkers`. */
  getWorkersCount(): Promise<never> {
    return this.getWorkers();
  }

  /**
   * Deletes the jobs of one state whose time (finishedOn, else processedOn, else timestamp) is at
   * least `grace` ms old, at most `limit` (0 for all), in bounded steps, and returns their ids; a
   * scheduler's current iteration and active jobs a worker holds stay. One `cleaned {count}` event.
   *
   * @example
   * await queue.clean(24 * 3600_000, 0, "completed"); // completed more than a day ago
   */
  clean(grace: number, limit: number, state: maintenance.CleanState = "completed"): Promise<string[]> {
    return maintenance.clean(this.context, grace, limit, state);
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
