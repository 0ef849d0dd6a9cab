/**
 * What a Queue reads — jobs, counts, states, logs — and the local events it emits, as BullMQ's
 * QueueGetters under its Queue. Every read is one call (a long range in pages of short calls); the
 * writes live in queue.ts, but for pausing and resuming a group, beside the group reads.
 */
import { NotSupportedError, UnexpectedReplyError } from "../errors.ts";
import { Emitter } from "../events/emitter.ts";
import { Job } from "../job/job.ts";
import { readJobPages } from "../job/job-pages.ts";
import { defaultJobTypes, jobStructures, pendingJobTypes } from "../job/job-structures.ts";
import {
  decodeGetJobCounts,
  decodeGetJobLogs,
  decodeGetJobStates,
  getJobCounts,
  getJobLogs,
  getJobStates,
} from "../redis/generated/scripts.ts";
import {
  attentionKey,
  groupJobsKey,
  jobKey,
  jobSubKeys,
  queueKeyPrefix,
  queueKeys,
  stateKeys,
} from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
import type { JobState, JobType } from "../types.ts";
import { Checker, checkGroupId } from "../validate.ts";
import { type GroupSummary, readGroupSummaries, setGroupPaused } from "./groups.ts";

/**
 * BullMQ's Queue events, local to this object (QueueEvents hears what every producer and worker
 * does): `waiting` after `add` made or found the job, `removed` after `remove`, `cleaned` with the
 * ids `clean` deleted and their state, `paused` and `resumed`, `error` for a listener that threw.
 */
export interface QueueListener<TData = unknown> {
  waiting: (job: Job<TData>) => void;
  removed: (jobId: string) => void;
  cleaned: (jobs: string[], type: string) => void;
  paused: () => void;
  resumed: () => void;
  error: (error: Error) => void;
}

export abstract class QueueGetters<TData = unknown> extends Emitter<QueueListener<TData>> {
  readonly name: string;
  readonly prefix: string;
  /** The queue's keys, and the sweeper's attention index its pause and resume note. */
  readonly keys: ReturnType<typeof queueKeys> & { attention: string };
  protected readonly port: RedisPort;
  /** @internal Where the queue's jobs live. */
  protected readonly context: QueueContext;

  protected constructor(name: string, prefix: string, context: QueueContext) {
    super();
    this.name = name;
    this.prefix = prefix;
    this.port = context.port;
    this.context = context;
    this.keys = { ...queueKeys(prefix, name), attention: attentionKey(prefix) };
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
      await runScript(
        this.port,
        getJobStates,
        { ...stateKeys(this.prefix, this.name), jobs: [] },
        { jobs: [{ id }] },
      ),
      ["states"],
    );
    if (states.length !== 1)
      throw new UnexpectedReplyError(`getJobState of job "${id}" in queue "${this.name}": unexpected reply`);
    // A grouped job ready in its group is in none of BullMQ's structures: its hash tells.
    if (states[0] === "unknown") return (await this.getJobWithState(id))?.state ?? "unknown";
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

  /** BullMQ Pro's groups (docs/groups.md): every known group from `start` to `end`, sorted by id. */
  async getGroups(start = 0, end = -1): Promise<GroupSummary[]> {
    const check = new Checker(`Queue "${this.name}": getGroups`);
    check.integer("start", start, 0);
    check.integer("end", end, -1);
    return (await readGroupSummaries(this.context, undefined, start, end)).groups;
  }

  /** One group's summary: its status, ready and running jobs (`empty` for a group nobody knows). */
  async getGroupStatus(groupId: string): Promise<GroupSummary> {
    const id = checkGroupId(new Checker(`Queue "${this.name}": getGroupStatus`), "groupId", groupId);
    const { groups } = await readGroupSummaries(this.context, [id]);
    return groups[0] ?? { id, status: "empty", waiting: 0, active: 0 };
  }

  /** A group's ready jobs, next first, from `start` to `end` (BullMQ Pro's getGroupJobs). */
  async getGroupJobs(groupId: string, start = 0, end = -1): Promise<Job<TData>[]> {
    const check = new Checker(`Queue "${this.name}": getGroupJobs`);
    const id = checkGroupId(check, "groupId", groupId);
    check.integer("start", start, 0);
    check.integer("end", end, -1);
    const key = groupJobsKey(queueKeyPrefix(this.prefix, this.name), id);
    return await readJobPages<TData>(this.context, [{ key, kind: "zset", type: "group" }], start, end, true);
  }

  /** How many ready jobs a group has. */
  async getGroupJobsCount(groupId: string): Promise<number> {
    return (await this.getGroupStatus(groupId)).waiting;
  }

  /** How many jobs of a group run now. */
  async getGroupActiveCount(groupId: string): Promise<number> {
    return (await this.getGroupStatus(groupId)).active;
  }

  /** Ready jobs in all groups, read `maxGroups` groups per call (BullMQ Pro's getGroupsJobsCount). */
  async getGroupsJobsCount(maxGroups = 1000): Promise<number> {
    new Checker(`Queue "${this.name}": getGroupsJobsCount`).integer("maxGroups", maxGroups, 1);
    let total = 0;
    for (let start = 0; ; start += maxGroups) {
      const page = await readGroupSummaries(this.context, undefined, start, start + maxGroups - 1);
      for (const group of page.groups) total += group.waiting;
      if (start + maxGroups >= page.total) return total;
    }
  }

  /** Stops workers from taking the group's jobs until resumed; its running jobs finish. True when it changed. */
  pauseGroup(groupId: string): Promise<boolean> {
    return setGroupPaused(
      this.context,
      checkGroupId(new Checker(`Queue "${this.name}": pauseGroup`), "groupId", groupId),
      true,
    );
  }

  /** Lets workers take the group's jobs again, in turn with the others. True when it changed. */
  resumeGroup(groupId: string): Promise<boolean> {
    return setGroupPaused(
      this.context,
      checkGroupId(new Checker(`Queue "${this.name}": resumeGroup`), "groupId", groupId),
      false,
    );
  }
}
