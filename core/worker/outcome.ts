/**
 * Decides what the ack writes for one attempt: BullMQ's retry rules (attempts = runs in total,
 * UnrecoverableError fails at once, backoff to delayed or straight back to wait), the processor's own
 * moves, and removeOnComplete/removeOnFail. Pure, so it is unit-tested without Redis.
 */

import { deadLetterFields, noDeadLetter } from "../dead-letter/dead-letter.ts";
import {
  DelayedError,
  JobCancelledError,
  RateLimitError,
  UnrecoverableError,
  WaitingChildrenError,
} from "../errors.ts";
import { type AckEntry, type AckOutcome, keptBy, parentPolicyOf } from "../job/ack-entry.ts";
import type { ActiveJob } from "../job/active-job.ts";
import { type BackoffStrategy, backoffDelay } from "../job/backoff.ts";
import { scriptCodes } from "../redis/generated/scripts.ts";
import type { BackoffOptions, DeadLetterOptions, KeepJobs } from "../types.ts";

/** How an attempt ended, before it is written. */
export type Settled =
  | { kind: "returned"; value: unknown }
  | { kind: "threw"; error: Error }
  /** Not run at all, or stopped by the worker's deadline: back to the front of the line. */
  | { kind: "handed-back" };

export interface OutcomeSettings {
  now: number;
  removeOnComplete?: KeepJobs;
  removeOnFail?: KeepJobs;
  backoffStrategies?: Record<string, BackoffStrategy>;
  random?: () => number;
  /** The Worker's dead-letter queue, for jobs without their own `opts.deadLetter`. */
  deadLetter?: DeadLetterOptions;
}

/** What the ack decided, for the worker's summary and events. */
export interface Decision {
  entry: AckEntry | undefined;
  /** completed, failed (for good), retried, delayed (by the processor), handed-back, waiting-children */
  result: "completed" | "failed" | "retried" | "delayed" | "handed-back" | "waiting-children";
  error?: Error;
  returnValue?: unknown;
}

function stacktraceWith(job: ActiveJob, error: Error): string {
  const limit = Number(job.opts.stackTraceLimit ?? -1);
  // BullMQ: a limit of 0 keeps no trace at all; no limit keeps every attempt's.
  if (limit === 0) return "[]";
  const traces = [...job.stacktrace, error.stack ?? `${error.name}: ${error.message}`];
  return JSON.stringify(limit > 0 ? traces.slice(-limit) : traces);
}

function baseEntry(job: ActiveJob, outcome: AckOutcome, keepJobs: KeepJobs | undefined): AckEntry {
  const kept = keptBy(keepJobs);
  return {
    id: job.id,
    token: job.token,
    outcome,
    value: "",
    stacktrace: "",
    attemptsMade: "",
    due: 0,
    priority: job.priority,
    lifo: job.opts.lifo ? "1" : "",
    keepCount: kept.count,
    keepAge: kept.age,
    keepLimit: kept.limit,
    attempts: Number(job.opts.attempts ?? 0),
    parentKey: job.parentKey ?? "",
    parentPrefix: job.parent ? `${job.parent.queueKey}:` : "",
    parentPolicy: parentPolicyOf(job.parent),
    dedupId: job.deduplicationId ?? "",
    deferred: job.deferredFailure !== undefined ? "1" : "",
    ...noDeadLetter,
    group: job.groupId,
  };
}

/** The ack refused a completion because of the job's children (the job is left active and locked). */
export function refusesCompletion(code: number): boolean {
  return code === scriptCodes.pendingDependencies || code === scriptCodes.childFailed;
}

/**
 * BullMQ's answer when the ack refuses a completion because of the job's children (-4 still pending,
 * -9 one failed): the attempt fails with BullMQ's message instead, an ordinary failure (retried while
 * attempts remain) for pending children, an unrecoverable one for a failed child.
 */
export function refusedCompletion(job: ActiveJob, code: number, settings: OutcomeSettings): Decision {
  const error =
    code === scriptCodes.childFailed
      ? new UnrecoverableError(
          `Cannot complete job ${job.id} because it has at least one failed child. moveToFinished`,
        )
      : new Error(`Job ${job.id} has pending dependencies. moveToFinished`);
  const decision = decide(job, { kind: "threw", error }, settings);
  // The failed child left `defa` on this running parent; BullMQ's final failure clears it.
  if (code === scriptCodes.childFailed && decision.entry) decision.entry.deferred = "1";
  return decision;
}

/**
 * A cancelled job's failure, whatever its processor threw after the abort: the cancel's reason as the
 * failedReason, final (no retry, no retries-exhausted event) and no dead letter — a cancel is not a
 * failure to keep for a redrive.
 */
function cancelledFailure(job: ActiveJob, error: Error, removeOnFail: KeepJobs | undefined): Decision {
  const attemptsMade = job.attemptsMade + 1;
  const entry = {
    ...baseEntry(job, "failed", removeOnFail),
    value: job.cancelReason as string,
    stacktrace: stacktraceWith(job, error),
    attemptsMade,
    attempts: attemptsMade + 1,
  };
  // Listeners see the cancel (its reason is the failedReason); what the processor threw is its cause.
  const reason = job.cancelReason as string;
  const cancelled = new JobCancelledError(reason, error instanceof JobCancelledError ? {} : { cause: error });
  return { entry, result: "failed", error: cancelled };
}

/** Turns an attempt's end into the ack entry and what to report. */
export function decide(job: ActiveJob, settled: Settled, settings: OutcomeSettings): Decision {
  const removeOnComplete = (job.opts.removeOnComplete as KeepJobs | undefined) ?? settings.removeOnComplete;
  const removeOnFail = (job.opts.removeOnFail as KeepJobs | undefined) ?? settings.removeOnFail;
  if (settled.kind === "handed-back")
    return { entry: baseEntry(job, "returned", undefined), result: "handed-back" };
  if (job.intent?.kind === "delayed") {
    const entry = { ...baseEntry(job, "delayed", undefined), due: job.intent.due };
    return { entry, result: "delayed" };
  }
  if (settled.kind === "returned") {
    let text: string | undefined;
    let problem: unknown;
    try {
      text = JSON.stringify(settled.value === undefined ? null : settled.value);
    } catch (error) {
      problem = error;
    }
    if (text !== undefined) {
      const entry = { ...baseEntry(job, "completed", removeOnComplete), value: text };
      entry.attemptsMade = job.attemptsMade + 1;
      return { entry, result: "completed", returnValue: settled.value };
    }
    const reason = problem instanceof Error ? problem.message : "the value has no JSON form";
    return decide(
      job,
      { kind: "threw", error: new Error(`the processor's return value cannot be stored as JSON: ${reason}`) },
      settings,
    );
  }
  const error = settled.error;
  if (error instanceof WaitingChildrenError) return { entry: undefined, result: "waiting-children" };
  if (job.cancelReason !== undefined) return cancelledFailure(job, error, removeOnFail);
  if (error instanceof DelayedError)
    return { entry: baseEntry(job, "returned", undefined), result: "handed-back" };
  if (error instanceof RateLimitError)
    return { entry: baseEntry(job, "returned", undefined), result: "handed-back" };
  const attemptsMade = job.attemptsMade + 1;
  const failure = {
    value: error.message,
    stacktrace: stacktraceWith(job, error),
    attemptsMade,
  };
  const finalFailure = (): Decision => ({
    entry: {
      ...baseEntry(job, "failed", removeOnFail),
      ...failure,
      ...deadLetterFields(job, failure, settings.deadLetter),
    },
    result: "failed",
    error,
  });
  const attempts = Number(job.opts.attempts ?? 0);
  // By name too, as BullMQ decides: a processor written for BullMQ throws BullMQ's own class.
  const unrecoverable = error instanceof UnrecoverableError || error.name === "UnrecoverableError";
  if (unrecoverable || job.deferredFailure !== undefined || attemptsMade >= attempts) {
    return finalFailure();
  }
  let wait: number;
  try {
    wait = backoffDelay(job.opts.backoff as BackoffOptions | undefined, {
      attemptsMade,
      error,
      job,
      strategies: settings.backoffStrategies,
      random: settings.random,
    });
  } catch (strategyError) {
    failure.value = `${error.message} (and the backoff failed: ${(strategyError as Error).message})`;
    return finalFailure();
  }
  if (wait < 0) return finalFailure();
  if (wait > 0) {
    return {
      entry: { ...baseEntry(job, "delayed", undefined), ...failure, due: settings.now + wait },
      result: "retried",
      error,
    };
  }
  return { entry: { ...baseEntry(job, "waiting", undefined), ...failure }, result: "retried", error };
}
