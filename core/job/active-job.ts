/**
 * A job while a worker runs it: the processor's handle for progress, logs, data, its time-limit
 * signal, and the moves BullMQ lets a processor make (delay itself, wait for its children).
 */
import { errorForCode, JobCancelledError, ValidationError } from "../errors.ts";
import { decodeJob, hashFromFlat } from "../redis/codec.ts";
import {
  decodeMoveToWaitingChildren,
  decodeUpdateJob,
  moveToWaitingChildren,
  updateJob,
} from "../redis/generated/scripts.ts";
import { jobSubKeys, queueKeys } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import { Job } from "./job.ts";

/** A move the processor asked for; the ack applies it. */
export type JobIntent = { kind: "delayed"; due: number };

export interface ActiveJobHooks {
  onProgress(job: ActiveJob, progress: unknown): void;
  /** The queue's events level (the worker's): progress events only at "all". */
  events: "all" | "final" | "none";
}

export class ActiveJob<TData = unknown, TResult = unknown> extends Job<TData, TResult> {
  /** The lock token this attempt holds. */
  token = "";

  /** A job leased with `token`, from its hash as Redis answered it (field, value, …). */
  static fromLease(context: QueueContext, id: string, fields: readonly string[], token: string): ActiveJob {
    const hash = hashFromFlat(fields);
    const job = new ActiveJob(context, id, decodeJob(hash));
    job.token = token;
    job.storedData = hash.data;
    job.cancelReason = hash["nq:cancel"];
    job.groupId = hash.gid ?? "";
    return job;
  }

  private attemptController: AbortController | undefined;
  private attemptAbort: { reason: unknown } | undefined;
  /**
   * Fires when the attempt's time limit is reached, the worker's deadline comes, or its lease is lost.
   * Made on first use: most processors never read it, and an AbortController is not free.
   */
  get signal(): AbortSignal {
    if (this.attemptAbort) return AbortSignal.abort(this.attemptAbort.reason);
    this.attemptController ??= new AbortController();
    return this.attemptController.signal;
  }

  /** @internal Stops the current attempt: its signal fires (now, or when first read). */
  abortAttempt(reason: unknown): void {
    if (this.attemptController) this.attemptController.abort(reason);
    else this.attemptAbort = { reason };
  }
  /**
   * @internal The reason of a cancel (queue.cancelJob) that reached this job: from its hash when it was
   * leased (it is then failed without running), or from a lease extension (its signal fires).
   */
  cancelReason: string | undefined;

  /** @internal A cancel reached the job: its attempt's signal fires with a JobCancelledError. */
  cancelled(reason: string): void {
    this.cancelReason = reason;
    this.abortAttempt(new JobCancelledError(reason));
  }
  /**
   * @internal The group its hash names (`gid`, written by a grouped add): its ack frees that group's
   * slot. "" for an ungrouped job, and for one whose `opts.group` no nimbusq add placed.
   */
  groupId = "";
  /** @internal Worker.rateLimitGroup held this job's group: its RateLimitError holds only that group. */
  groupRateLimited = false;
  /** @internal */
  intent: JobIntent | undefined;
  /** @internal */
  hooks: ActiveJobHooks | undefined;
  /** @internal The data JSON as stored (a dead letter copies it; the processor may change `data`). */
  storedData: string | undefined;

  private subject(): string {
    return `job "${this.id}" in queue "${this.queueName}"`;
  }

  private async update(kind: "progress" | "log" | "data", value: string): Promise<number> {
    const { port, prefix, queueName } = this.context;
    const keys = queueKeys(prefix, queueName);
    const reply = decodeUpdateJob(
      await runScript(
        port,
        updateJob,
        { job: this.key, logs: jobSubKeys(this.key).logs, events: keys.events, meta: keys.meta },
        {
          jobId: this.id,
          kind,
          value,
          keepLogs: Number(this.opts.keepLogs ?? 0),
          events: (this.hooks?.events ?? "all") === "all" ? 2 : 1,
        },
      ),
    );
    if (reply.form === "missing") throw errorForCode(reply.code, `update ${kind}`, this.subject());
    return reply.result;
  }

  private json(field: string, value: unknown): string {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch {
      text = undefined;
    }
    if (text === undefined) throw new ValidationError(field, "JSON-serializable", `${this.subject()}`);
    return text;
  }

  /** Records progress (a number or an object) and emits BullMQ's `progress` event. */
  async updateProgress(progress: number | object): Promise<void> {
    await this.update("progress", this.json("progress", progress));
    this.progress = progress;
    this.hooks?.onProgress(this, progress);
  }

  /** Appends a line to the job's logs (BullMQ's `getJobLogs` reads them); returns the line count. */
  async log(line: string): Promise<number> {
    return await this.update("log", String(line));
  }

  /** Replaces the job's data. */
  async updateData(data: TData): Promise<void> {
    const text = this.json("data", data);
    await this.update("data", text);
    this.data = data;
    this.storedData = text;
  }

  /** Moves the job to delayed until `timestamp` (ms) once the processor throws DelayedError. */
  async moveToDelayed(timestamp: number, _token?: string): Promise<void> {
    if (!Number.isFinite(timestamp) || timestamp < 0) {
      throw new ValidationError("timestamp", "a time in ms since the epoch", this.subject());
    }
    this.intent = { kind: "delayed", due: Math.floor(timestamp) };
  }

  /**
   * Parks a parent in waiting-children while any child (or the given one) is pending; true when it
   * moved, and the processor should then throw WaitingChildrenError.
   */
  async moveToWaitingChildren(
    _token?: string,
    opts: { child?: { id: string; queue: string } } = {},
  ): Promise<boolean> {
    const { port, prefix, queueName, clock } = this.context;
    const keys = queueKeys(prefix, queueName);
    const reply = decodeMoveToWaitingChildren(
      await runScript(
        port,
        moveToWaitingChildren,
        {
          lock: jobSubKeys(this.key).lock,
          dependencies: jobSubKeys(this.key).dependencies,
          unsuccessful: jobSubKeys(this.key).unsuccessful,
          active: keys.active,
          waitingChildren: keys.waitingChildren,
          stalled: keys.stalled,
          events: keys.events,
        },
        {
          jobId: this.id,
          token: this.token,
          now: clock(),
          child: opts.child ? `${opts.child.queue}:${opts.child.id}` : "",
        },
      ),
    );
    if (reply.form === "refused") throw errorForCode(reply.code, "moveToWaitingChildren", this.subject());
    return reply.moved === 1;
  }
}
