/**
 * Moves an operator makes on one job, with BullMQ's semantics and events: remove (with its children),
 * promote, changeDelay and changePriority. Each is one script call, safe to replay.
 */

import { errorForCode, JobNotInStateError } from "../errors.ts";
import {
  changeDelay as changeDelayScript,
  changePriority,
  decodeChangeDelay,
  decodeChangePriority,
  decodePromoteJob,
  decodeRemoveJob,
  decodeRetryJob,
  promoteJob,
  removeJob,
  retryJob,
  scriptCodes,
} from "../redis/generated/scripts.ts";
import {
  attentionKey,
  defaultReplayGuardTtlMs,
  groupKeys,
  jobKey,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
} from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import { Checker, maxDueTime, maxPriority } from "../validate.ts";

/** How long a call's replay guard lives (ms): longer than the HTTP client's retries. */
const guardTtl = defaultReplayGuardTtlMs;

/** BullMQ's `job.retry` options: by default a retried job keeps its attempt counters. */
export interface RetryOptions {
  resetAttemptsMade?: boolean;
  resetAttemptsStarted?: boolean;
}

export interface RemoveOptions {
  /** Remove its children (and theirs) too, across queues; BullMQ's default is true. */
  removeChildren?: boolean;
}

export interface ChangePriorityOptions {
  /** The new priority, 1 (highest) to 2,097,151, or 0 for none (default). */
  priority?: number;
  /** Put the job ahead of the jobs of its priority (at the head of wait for priority 0). */
  lifo?: boolean;
}

function subject(context: QueueContext, id: string): string {
  return `job "${id}" in queue "${context.queueName}"`;
}

function keysOf(context: QueueContext, id: string) {
  const keys = queueKeys(context.prefix, context.queueName);
  const replayGuard = replayGuardKey(context.prefix, context.queueName, crypto.randomUUID());
  return {
    ...keys,
    jobKey: jobKey(context.prefix, context.queueName, id),
    replayGuard,
    attention: attentionKey(context.prefix),
  };
}

function refuse(code: number, operation: string, context: QueueContext, id: string, state?: string): never {
  if (code === scriptCodes.notInState && state)
    throw new JobNotInStateError(`${operation}: ${subject(context, id)} is not ${state}`);
  throw errorForCode(code, operation, subject(context, id));
}

/**
 * BullMQ's `job.remove({ removeChildren })`. Refused with JobLockedError while a worker holds the job
 * (or, with children, any pending job below it), and with JobBelongsToSchedulerError for a job
 * scheduler's current iteration. A job that is already gone is no error.
 */
export async function removeJobWithChildren(
  context: QueueContext,
  id: string,
  opts: RemoveOptions = {},
): Promise<void> {
  const check = new Checker(`Job "${id}": remove`);
  check.object("opts", opts, ["removeChildren"]);
  const withChildren =
    opts.removeChildren === undefined ? true : check.boolean("removeChildren", opts.removeChildren);
  const { prefix, queueName } = context;
  const reply = decodeRemoveJob(
    await runScript(
      context.port,
      removeJob,
      { jobKey: jobKey(prefix, queueName, id), schedulers: queueKeys(prefix, queueName).repeat },
      { prefix: queueKeyPrefix(prefix, queueName), jobId: id, removeChildren: withChildren ? "1" : "" },
    ),
  );
  if (reply.form === "refused") refuse(reply.code, "remove", context, id);
}

/** A grouped job's delayed set is nimbusq's own (lua/includes/groupKeys.lua). */
function delayedKeyOf(context: QueueContext, grouped: boolean): string | undefined {
  return grouped ? groupKeys(queueKeyPrefix(context.prefix, context.queueName)).delayed : undefined;
}

/**
 * BullMQ's `job.promote()`: a delayed job is ready now (a grouped one in its group). JobNotInStateError
 * when it is not delayed.
 */
export async function promote(context: QueueContext, id: string, grouped = false): Promise<void> {
  const keys = keysOf(context, id);
  const delayed = delayedKeyOf(context, grouped) ?? keys.delayed;
  const reply = decodePromoteJob(
    await runScript(context.port, promoteJob, { ...keys, delayed }, { jobId: id, guardTtl }),
  );
  if (reply.form === "refused") refuse(reply.code, "promote", context, id, "delayed");
}

/**
 * BullMQ's `job.changeDelay(delay)`: a delayed job is due `delay` ms from now. JobNotInStateError
 * when it is not delayed.
 */
export async function changeDelay(
  context: QueueContext,
  id: string,
  delay: number,
  grouped = false,
): Promise<void> {
  const now = context.clock();
  new Checker(`Job "${id}": changeDelay`).integer("delay", delay, 0, maxDueTime - now);
  const keys = keysOf(context, id);
  const delayed = delayedKeyOf(context, grouped) ?? keys.delayed;
  const reply = decodeChangeDelay(
    await runScript(
      context.port,
      changeDelayScript,
      { ...keys, delayed },
      {
        jobId: id,
        delay,
        now,
        guardTtl,
      },
    ),
  );
  if (reply.form === "refused") refuse(reply.code, "changeDelay", context, id, "delayed");
}

/**
 * BullMQ's `job.changePriority({ priority, lifo })`: a waiting or prioritized job takes its new place
 * at once; in any other state only its stored priority changes. No event. Returns the new priority.
 */
export async function changeJobPriority(
  context: QueueContext,
  id: string,
  opts: ChangePriorityOptions,
): Promise<number> {
  const check = new Checker(`Job "${id}": changePriority`);
  check.object("opts", opts, ["priority", "lifo"]);
  const priority = opts.priority === undefined ? 0 : check.integer("priority", opts.priority, 0, maxPriority);
  const lifo = opts.lifo === undefined ? false : check.boolean("lifo", opts.lifo);
  const reply = decodeChangePriority(
    await runScript(context.port, changePriority, keysOf(context, id), {
      jobId: id,
      priority,
      lifo: lifo ? "1" : "",
      guardTtl,
    }),
  );
  if (reply.form === "refused") refuse(reply.code, "changePriority", context, id);
  return priority;
}

/**
 * BullMQ's `job.retry(state)`: out of the `failed` or `completed` set, its finish fields cleared, into
 * wait or prioritized. Throws JobNotFoundError, or JobNotInStateError when the job is not in that state.
 */
export async function retryFinished(
  context: QueueContext,
  id: string,
  state: "failed" | "completed",
  opts: RetryOptions,
  lifo: boolean,
): Promise<void> {
  const keys = keysOf(context, id);
  const reply = decodeRetryJob(
    await runScript(
      context.port,
      retryJob,
      { ...keys, finished: keys[state] },
      {
        jobId: id,
        state,
        lifo: lifo ? "1" : "",
        resetAttemptsMade: opts.resetAttemptsMade ? "1" : "",
        resetAttemptsStarted: opts.resetAttemptsStarted ? "1" : "",
        guardTtl,
      },
    ),
  );
  if (reply.form === "refused") refuse(reply.code, "retry", context, id, state);
}
