/**
 * The producer side of a queue: adds jobs and reads them, with BullMQ's names and semantics, over a
 * Redis HTTP client. Every write is one atomic script call that is safe to replay.
 */

import { type RedriveOptions, redrive } from "../dead-letter/redrive.ts";
import { Job } from "../job/job.ts";
import { type RemoveOptions, removeJobWithChildren } from "../job/job-moves.ts";
import { decodePauseQueue, decodeTrimEvents, pauseQueue, trimEvents } from "../redis/generated/scripts.ts";
import { checkJobTargets } from "../redis/hash-slot.ts";
import { defaultPrefix, queueKeys, queueQualifiedName } from "../redis/keys.ts";
import { Lifecycle, redisPortFrom } from "../redis/lifecycle.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
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
import { type AddedJob, placementOf, writeJobs, writeSettings } from "./add-jobs.ts";
import type { AddOutcome, NewJob } from "./add-types.ts";
import type { QueueOptions } from "./queue-options.ts";
import { QueueReads } from "./queue-reads.ts";

/**
 * A queue in BullMQ 6's layout.
 *
 * @example
 * const queue = new Queue("email", { redis: createRedis() });
 * await queue.add("welcome", { to: "a@example.com" }, { attempts: 3, backoff: { type: "exponential", delay: 1000 } });
 */
export class Queue<TData = unknown> extends QueueReads<TData> {
  override readonly name: string;
  override readonly prefix: string;
  override readonly keys: ReturnType<typeof queueKeys>;
  protected override readonly port: RedisPort;
  private readonly options: QueueOptions;
  private readonly lifecycle: Lifecycle;

  constructor(name: string, options: QueueOptions) {
    super();
    this.name = checkQueueName(name);
    this.lifecycle = new Lifecycle(`Queue "${this.name}"`);
    const port = redisPortFrom(options, `Queue "${this.name}"`);
    this.prefix = checkPrefix(options.prefix ?? defaultPrefix);
    this.options = options;
    this.port = this.lifecycle.guard(port);
    this.keys = queueKeys(this.prefix, this.name);
    this.location = {
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
    return new Job<TData>(this.location, id, {
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
    const now = this.location.clock();
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
    await removeJobWithChildren(this.location, id, opts);
  }

  private get schedulers(): schedulers.SchedulerHost {
    return { location: this.location, options: this.options };
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

  async resume(): Promise<void> {
    decodePauseQueue(await runScript(this.port, pauseQueue, this.keys, { pause: "0" }));
  }

  async isPaused(): Promise<boolean> {
    const meta = await this.port.hgetall(this.keys.meta);
    for (let i = 0; i < meta.length; i += 2) if (meta[i] === "paused") return true;
    return false;
  }

  /** Moves this queue's dead letters back into it as new jobs (see core/dead-letter/redrive.ts). */
  redrive(options?: RedriveOptions) {
    return redrive(this.location, writeSettings(this.options, this.location.clock()), options);
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
}
