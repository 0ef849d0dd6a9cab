/** A job as read from (or just written to) Redis, with BullMQ's field names and getters. */
import { UnexpectedReplyError } from "../errors.ts";
import type { AnyQueueEvents } from "../events/queue-events.ts";
import { waitUntilFinished } from "../events/wait-until-finished.ts";
import { type DecodedJob, decodeJob, hashFromFlat } from "../redis/codec.ts";
import {
  decodeGetDependencyCounts,
  decodeGetJobStates,
  getDependencyCounts,
  getJobStates,
} from "../redis/generated/scripts.ts";
import { jobKey, jobSubKeys, queueQualifiedName, stateKeys } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import type { JobState, JobsOptions } from "../types.ts";
import { type CancelResult, cancelJob } from "./cancel.ts";
import {
  type ChangePriorityOptions,
  changeDelay,
  changeJobPriority,
  promote,
  type RemoveOptions,
  type RetryOptions,
  removeJobWithChildren,
  retryFinished,
} from "./job-moves.ts";

/** The queue `Job.create` and `Job.fromId` take (a nimbusq Queue is one). */
type JobQueue<T> = {
  add(name: string, data: T, opts?: JobsOptions): Promise<Job<T>>;
  getJob(id: string): Promise<Job<T> | undefined>;
};

/** Where a job lives: enough to build its keys. */
export class Job<TData = unknown, TResult = unknown> {
  readonly id: string;
  name: string;
  data: TData;
  /** Options with their public (long) names. */
  opts: Record<string, unknown>;
  timestamp: number;
  delay: number;
  priority: number;
  progress: unknown = 0;
  returnvalue: TResult | undefined;
  failedReason: string | undefined;
  stacktrace: string[] = [];
  attemptsMade = 0;
  attemptsStarted = 0;
  stalledCounter = 0;
  processedOn: number | undefined;
  finishedOn: number | undefined;
  processedBy: string | undefined;
  parentKey: string | undefined;
  parent: { id: string; queueKey: string } | undefined;
  repeatJobKey: string | undefined;
  deduplicationId: string | undefined;
  /** BullMQ's `defa`: the reason the next worker will fail this job with at once. */
  deferredFailure: string | undefined;

  /** @internal */
  constructor(
    readonly context: QueueContext,
    id: string,
    fields: Pick<DecodedJob, "name" | "data" | "opts" | "timestamp" | "delay" | "priority"> &
      Partial<DecodedJob>,
  ) {
    this.id = id;
    this.name = fields.name;
    this.data = fields.data as TData;
    this.opts = fields.opts;
    this.timestamp = fields.timestamp;
    this.delay = fields.delay;
    this.priority = fields.priority;
    if (fields.progress !== undefined) this.progress = fields.progress;
    this.returnvalue = fields.returnvalue as TResult | undefined;
    this.failedReason = fields.failedReason;
    if (fields.stacktrace) this.stacktrace = fields.stacktrace;
    this.attemptsMade = fields.attemptsMade ?? 0;
    this.attemptsStarted = fields.attemptsStarted ?? 0;
    this.stalledCounter = fields.stalledCounter ?? 0;
    this.processedOn = fields.processedOn;
    this.finishedOn = fields.finishedOn;
    this.processedBy = fields.processedBy;
    this.parentKey = fields.parentKey;
    this.parent = fields.parent;
    this.repeatJobKey = fields.repeatJobKey;
    this.deduplicationId = fields.deduplicationId;
    this.deferredFailure = fields.deferredFailure;
  }

  /** BullMQ's `Job.create(queue, name, data, opts)`: the queue adds the job (`queue.add`). */
  static create<T>(queue: Pick<JobQueue<T>, "add">, name: string, data: T, opts?: JobsOptions) {
    return queue.add(name, data, opts);
  }

  /** BullMQ's `Job.fromId(queue, id)`: the job as stored, undefined when there is none. */
  static fromId<T>(queue: Pick<JobQueue<T>, "getJob">, id: string) {
    return queue.getJob(id);
  }

  /** @internal Decodes a flat `{id, {field, value, …}, …}` reply into jobs, skipping ids without a hash. */
  static listFromReply<T = unknown, R = unknown>(
    context: QueueContext,
    reply: readonly { jobId: string; fields: readonly string[] }[],
  ): Job<T, R>[] {
    return reply.flatMap(({ jobId, fields }) => Job.fromFlat<T, R>(context, jobId, fields) ?? []);
  }

  /** @internal Decodes a stored hash (flat HGETALL reply); undefined when the hash is empty. */
  static fromFlat<T = unknown, R = unknown>(
    context: QueueContext,
    id: string,
    flat: readonly string[],
  ): Job<T, R> | undefined {
    if (flat.length === 0) return undefined;
    return new Job<T, R>(context, id, decodeJob(hashFromFlat(flat)));
  }

  /**
   * When the job scheduler planned this iteration to run (ms), cron or `every`: the millis of its id
   * `repeat:<schedulerId>:<millis>` (for cron also BullMQ's `opts.prevMillis`), so a late start or a
   * retry sees the planned time; undefined for jobs no scheduler made.
   */
  get scheduledAt(): number | undefined {
    if (!this.repeatJobKey) return undefined;
    const millis = /^repeat:.*:(\d+)$/.exec(this.id)?.[1];
    if (millis !== undefined) return Number(millis);
    return typeof this.opts.prevMillis === "number" ? this.opts.prevMillis : undefined;
  }

  get queueName(): string {
    return this.context.queueName;
  }

  /** The queue as `<prefix>:<queueName>`, BullMQ's `queueQualifiedName`. */
  get queueQualifiedName(): string {
    return queueQualifiedName(this.context.prefix, this.context.queueName);
  }

  /** `{P}<jobId>`, the job's hash key (what a parent's `:dependencies` set holds). */
  get key(): string {
    return jobKey(this.context.prefix, this.context.queueName, this.id);
  }

  /** The job's state, from the structure that holds it (BullMQ's `getState` order). */
  async getState(): Promise<JobState> {
    return (await Job.getStates([this]))[0] as JobState;
  }

  /**
   * @internal A job and its state read in one call, so they agree (two reads could see the state of
   * a job completed in between without its return value). Undefined when the job does not exist.
   */
  static async readWithState<T = unknown, R = unknown>(
    context: QueueContext,
    id: string,
  ): Promise<{ job: Job<T, R>; state: JobState } | undefined> {
    const { port, prefix, queueName } = context;
    const reply = decodeGetJobStates(
      await runScript(
        port,
        getJobStates,
        { ...stateKeys(prefix, queueName), jobs: [{ job: jobKey(prefix, queueName, id) }] },
        { jobs: [{ id }] },
      ),
      ["withFields"],
    );
    const [read] = reply.jobs;
    if (!read || reply.jobs.length !== 1)
      throw new UnexpectedReplyError(`read of job "${id}" in queue "${queueName}": unexpected reply`);
    const job = Job.fromFlat<T, R>(context, id, read.fields);
    return job && { job, state: read.state as JobState };
  }

  /** The states of jobs of one queue, in one call: what `getState` says of each, in order. */
  static async getStates(jobs: readonly Job[]): Promise<JobState[]> {
    const first = jobs[0];
    if (!first) return [];
    const { port, prefix, queueName } = first.context;
    const ids = jobs.map((job) => ({ id: job.id }));
    // A grouped job ready in its group is told by its hash: then the call reads the jobs' keys too.
    const keyed = jobs.some((job) => job.opts.group)
      ? jobs.map((job) => ({ job: jobKey(prefix, queueName, job.id) }))
      : [];
    const reply = decodeGetJobStates(
      await runScript(port, getJobStates, { ...stateKeys(prefix, queueName), jobs: keyed }, { jobs: ids }),
    );
    const states = reply.form === "states" ? reply.states : reply.jobs.map((read) => read.state);
    if (states.length !== jobs.length)
      throw new UnexpectedReplyError(
        `getState of ${jobs.length} job(s) in queue "${queueName}": unexpected reply`,
      );
    return states as JobState[];
  }

  /** BullMQ's state checks: each one read of the job's state (`getState`). */
  async isCompleted(): Promise<boolean> {
    return (await this.getState()) === "completed";
  }
  async isFailed(): Promise<boolean> {
    return (await this.getState()) === "failed";
  }
  async isDelayed(): Promise<boolean> {
    return (await this.getState()) === "delayed";
  }
  async isActive(): Promise<boolean> {
    return (await this.getState()) === "active";
  }
  async isWaiting(): Promise<boolean> {
    return (await this.getState()) === "waiting";
  }
  async isWaitingChildren(): Promise<boolean> {
    return (await this.getState()) === "waiting-children";
  }

  /** Children's return values by child key (`<prefix>:<queue>:<id>`), as BullMQ returns them. */
  async getChildrenValues<T = unknown>(): Promise<Record<string, T>> {
    const flat = await this.context.port.hgetall(jobSubKeys(this.key).processed);
    const values: Record<string, T> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const raw = flat[i + 1] as string;
      try {
        values[flat[i] as string] = JSON.parse(raw) as T;
      } catch {
        values[flat[i] as string] = raw as T;
      }
    }
    return values;
  }

  /** How many children are pending, done, failed-but-ignored and failed. */
  async getDependenciesCount(): Promise<{
    processed: number;
    unprocessed: number;
    ignored: number;
    failed: number;
  }> {
    const key = this.key;
    const { processed, unprocessed, ignored, failed } = decodeGetDependencyCounts(
      await runScript(
        this.context.port,
        getDependencyCounts,
        {
          dependencies: jobSubKeys(key).dependencies,
          processed: jobSubKeys(key).processed,
          failed: jobSubKeys(key).failed,
          unsuccessful: jobSubKeys(key).unsuccessful,
        },
        {},
      ),
    );
    return { processed, unprocessed, ignored, failed };
  }

  /**
   * Removes the job, as BullMQ's `job.remove({ removeChildren })`: with its children (the default),
   * depth-first and across queues; a parent left with nothing pending goes to the end of wait.
   * Refused with JobLockedError while a worker holds the job (or a pending child), and with
   * JobBelongsToSchedulerError for a job scheduler's current iteration.
   */
  remove(opts?: RemoveOptions): Promise<void> {
    return removeJobWithChildren(this.context, this.id, opts);
  }

  /** Makes a delayed job ready now (BullMQ's `promote`); JobNotInStateError when it is not delayed. */
  async promote(): Promise<void> {
    await promote(this.context, this.id, this.opts.group !== undefined);
    this.delay = 0;
  }

  /** Makes a delayed job due `delay` ms from now (BullMQ's `changeDelay`). */
  async changeDelay(delay: number): Promise<void> {
    await changeDelay(this.context, this.id, delay, this.opts.group !== undefined);
    this.delay = delay;
  }

  /** Gives the job a new priority, ahead of its peers with `lifo` (BullMQ's `changePriority`); no event. */
  async changePriority(opts: ChangePriorityOptions): Promise<void> {
    this.priority = await changeJobPriority(this.context, this.id, opts);
  }

  /**
   * Resolves with the return value when the job completes, rejects with a JobFailedError (message: the
   * failedReason) when it fails — also when that happened before the call (BullMQ's method). `ttl`
   * ms bounds the wait. @example const result = await job.waitUntilFinished(queueEvents, 30_000);
   */
  waitUntilFinished(queueEvents: AnyQueueEvents, ttl?: number): Promise<TResult> {
    const read = () => Job.readWithState<TData, TResult>(this.context, this.id);
    return waitUntilFinished(this, read, queueEvents, ttl);
  }

  /**
   * Cancels the job wherever it is, as `queue.cancelJob` (with the default events settings: the
   * queue's method writes with its queue's).
   */
  cancel(reason?: string): Promise<CancelResult> {
    return cancelJob(this.context, this.id, reason);
  }

  /**
   * Puts a finished job back in line, as BullMQ's `job.retry(state)`: out of the `failed` (default) or
   * `completed` set, its finish fields cleared, into wait or prioritized. Throws JobNotFoundError, or
   * JobNotInStateError when the job is not in that state.
   *
   * @example
   * const job = await queue.getJob("42");
   * await job?.retry("failed", { resetAttemptsMade: true });
   */
  async retry(state: "failed" | "completed" = "failed", opts: RetryOptions = {}): Promise<void> {
    await retryFinished(this.context, this.id, state, opts, this.opts.lifo === true);
    this.failedReason = undefined;
    this.finishedOn = undefined;
    this.processedOn = undefined;
    this.returnvalue = undefined;
    if (opts.resetAttemptsMade) this.attemptsMade = 0;
    if (opts.resetAttemptsStarted) this.attemptsStarted = 0;
  }
}
