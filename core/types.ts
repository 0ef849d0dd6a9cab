/**
 * Public types.
 *
 * Glossary
 * - queue key prefix `{P}`: `<prefix>:<queueName>:`, the start of every key of a queue.
 * - job key: `{P}<jobId>`, the job's hash; BullMQ's layout (see core/redis/keys.ts, core/redis/codec.ts).
 * - marker: the `{P}marker` ZSET that wakes blocked BullMQ workers; nimbusq writes it, never waits on it.
 * - replay guard: a short-lived key that makes a script call safe to run twice (the HTTP client
 *   retries on network errors, so a call may execute again after its answer was lost).
 * - lease: a job moved to `active` with a `:lock` token that expires; the worker that holds the token
 *   is the only one whose result is written.
 */

/** Delay between attempts: a number means `{ type: "fixed", delay }`. */
export type BackoffOptions = number | { type: string; delay?: number; jitter?: number };

/**
 * What to keep of finished jobs: `true` removes at once, `false`/undefined keeps all, a number keeps
 * the newest N, an object keeps the newest `count` and/or removes jobs older than `age` seconds
 * (at most `limit` per finish).
 */
export type KeepJobs = boolean | number | { count?: number; age?: number; limit?: number };

export interface DeduplicationOptions {
  /** Jobs with the same id are one job while the window lasts. */
  id: string;
  /** Window length in ms; without it the window lasts until the owning job finishes or is removed. */
  ttl?: number;
  /** Reset the window's TTL on each duplicate. */
  extend?: boolean;
  /** Replace the owning job if it is still delayed ("debounce"). */
  replace?: boolean;
}

export interface ParentOptions {
  /** The parent's job id. */
  id: string;
  /** The parent's queue as `<prefix>:<queueName>` (what BullMQ calls the queue key). */
  queue: string;
}

/**
 * nimbusq: where a job goes when it fails for good (see core/dead-letter/dead-letter.ts). The copy is a new
 * waiting job of `queue` (under `prefix`, by default the failing job's own prefix).
 */
export interface DeadLetterOptions {
  queue: string;
  prefix?: string;
}

/** A job's group (BullMQ Pro's `opts.group`): its id follows a job id's rules, integers allowed, no `:`. */
export interface GroupOptions {
  id: string;
}

/** Options of one job, with BullMQ's names and meanings. */
export interface JobsOptions {
  jobId?: string;
  delay?: number;
  priority?: number;
  lifo?: boolean;
  attempts?: number;
  backoff?: BackoffOptions;
  removeOnComplete?: KeepJobs;
  removeOnFail?: KeepJobs;
  deduplication?: DeduplicationOptions;
  parent?: ParentOptions;
  /** BullMQ Pro's groups: the job is served round-robin with the other groups' jobs (docs/groups.md). */
  group?: GroupOptions;
  timestamp?: number;
  stackTraceLimit?: number;
  keepLogs?: number;
  sizeLimit?: number;
  failParentOnFailure?: boolean;
  continueParentOnFailure?: boolean;
  ignoreDependencyOnFailure?: boolean;
  removeDependencyOnFailure?: boolean;
  /** nimbusq: the per-attempt time limit in ms (the processor's `job.signal` fires at it). */
  timeout?: number;
  /**
   * nimbusq: copy the job to this queue when it fails for good (wins over the Worker's option). Kept
   * in the stored `opts`; a BullMQ Worker ignores it.
   */
  deadLetter?: DeadLetterOptions;
}

/** One job of `addBulk`. */
export interface BulkJob<TData = unknown> {
  name: string;
  data: TData;
  opts?: JobsOptions;
}

/** A node of a flow: a job and the children it waits for. */
export interface FlowJob {
  name: string;
  queueName: string;
  data?: unknown;
  prefix?: string;
  opts?: Omit<JobsOptions, "parent" | "deduplication"> & { deduplication?: DeduplicationOptions };
  children?: FlowJob[];
}

/** The states a job can be in, as `getState` names them. */
export type JobState =
  | "completed"
  | "failed"
  | "delayed"
  | "prioritized"
  | "active"
  | "waiting"
  | "waiting-children"
  | "unknown";

/** The types `getJobs`/`getJobCounts` accept (`wait` is an alias of `waiting`). */
export type JobType = Exclude<JobState, "unknown"> | "wait" | "paused";

/**
 * When a job scheduler runs (BullMQ 6's `RepeatOptions` for `upsertJobScheduler`): either a cron
 * `pattern` (5 fields, or 6 with seconds first) in the IANA time zone `tz` (UTC by default), or a
 * fixed interval `every` (ms). Dates are ms since the epoch, Date objects or date strings.
 */
export interface RepeatOptions {
  pattern?: string;
  tz?: string;
  every?: number;
  /** `every` only: runs fall at `offset` ms past each multiple of `every` (default: the first run's). */
  offset?: number;
  /** Most iterations made. */
  limit?: number;
  startDate?: Date | string | number;
  endDate?: Date | string | number;
  /** A cron schedule's first iteration runs now rather than at the pattern's next time. */
  immediately?: boolean;
}

/** What each iteration's job options are built from (a scheduler sets the id, delay and timing itself). */
export type JobSchedulerTemplateOptions = Omit<
  JobsOptions,
  "jobId" | "delay" | "deduplication" | "parent" | "timestamp"
>;

/** The job every iteration of a scheduler makes: its name (default: the scheduler id), data and options. */
export interface JobSchedulerTemplate<TData = unknown> {
  name?: string;
  data?: TData;
  opts?: JobSchedulerTemplateOptions;
}

/** A job scheduler as BullMQ's `getJobScheduler` returns it. */
export interface JobSchedulerJson<TData = unknown> {
  /** The scheduler id. */
  key: string;
  name: string;
  /** When the pending iteration runs (ms). */
  next: number;
  /** How many iterations it has made (kept across upserts). */
  iterationCount?: number;
  limit?: number;
  startDate?: number;
  endDate?: number;
  tz?: string;
  pattern?: string;
  every?: number;
  offset?: number;
  template?: { data?: TData; opts?: Record<string, unknown> };
}

/** Which events a writer (worker, queue, flow) adds to the stream: BullMQ's all, only completed/failed/retries-exhausted, or none. */
export type EventsLevel = "all" | "final" | "none";
