/**
 * Error classes. Each has a literal `name` (minifiers rename classes), says what happened, to which
 * queue, job and operation — never the job's data — and keeps the underlying error as `cause`.
 */

// The scripts' return codes are declared once, in the CODES of their Lua headers (lua/README.md).
import { scriptCodes } from "./redis/generated/codes.ts";

export class QueueError extends Error {
  override name: string = "QueueError";
}

/** A caller passed something nimbusq cannot accept; nothing was written. */
export class ValidationError extends QueueError {
  override name = "ValidationError" as const;
  /** Dotted path of the offending input, e.g. `opts.priority` or `jobs[3].data`. */
  readonly field: string;
  /** What was expected, e.g. `an integer from 0 to 2097151`. */
  readonly rule: string;

  constructor(field: string, rule: string, context: string) {
    super(`${context}: ${field} must be ${rule}`);
    this.field = field;
    this.rule = rule;
  }
}

/** A job named as a parent does not exist (BullMQ's -5). */
export class ParentNotFoundError extends QueueError {
  override name = "ParentNotFoundError" as const;
}

/** A custom-id job already exists with another parent (BullMQ's -7). */
export class ParentConflictError extends QueueError {
  override name = "ParentConflictError" as const;
}

/** A job is leased by a worker and cannot be changed now (BullMQ's "locked"). */
export class JobLockedError extends QueueError {
  override name = "JobLockedError" as const;
}

/** No job has that id (BullMQ's -1). */
export class JobNotFoundError extends QueueError {
  override name = "JobNotFoundError" as const;
}

/** The job is not in the state the operation needs, e.g. retrying a job that is not failed (BullMQ's -3). */
export class JobNotInStateError extends QueueError {
  override name = "JobNotInStateError" as const;
}

/** The job is its job scheduler's current iteration: remove the scheduler instead (BullMQ's -8). */
export class JobBelongsToSchedulerError extends QueueError {
  override name = "JobBelongsToSchedulerError" as const;
}

/** The queue is in no state for the operation, e.g. obliterating a queue with active jobs without force. */
export class QueueStateError extends QueueError {
  override name = "QueueStateError" as const;
}

/** A job scheduler's iteration would take the id of an existing job, which is never overwritten. */
export class JobSchedulerConflictError extends QueueError {
  override name = "JobSchedulerConflictError" as const;
}

/** Redis answered something the scripts never return: a bug or a foreign change to the data. */
export class UnexpectedReplyError extends QueueError {
  override name = "UnexpectedReplyError" as const;
}

/** Turns a script's code (BullMQ's numbering where BullMQ has one) into the typed error for `operation`. */
export function errorForCode(code: number, operation: string, subject: string): QueueError {
  switch (code) {
    case scriptCodes.parentNotFound:
      return new ParentNotFoundError(`${operation}: the parent of ${subject} does not exist`);
    case scriptCodes.parentConflict:
      return new ParentConflictError(`${operation}: ${subject} already exists with another parent`);
    case scriptCodes.jobLocked:
      return new JobLockedError(`${operation}: ${subject} is locked by a worker`);
    case scriptCodes.jobBelongsToScheduler:
      return new JobBelongsToSchedulerError(
        `${operation}: ${subject} is its job scheduler's current iteration; remove the scheduler instead`,
      );
    case scriptCodes.jobNotFound:
      return new JobNotFoundError(`${operation}: ${subject} does not exist`);
    case scriptCodes.schedulerIdTaken:
      return new JobSchedulerConflictError(
        `${operation}: the next iteration of ${subject} would overwrite a job that is not pending`,
      );
    case scriptCodes.schedulerSlotsBusy:
      return new JobSchedulerConflictError(
        `${operation}: the next 32 iteration slots of ${subject} are taken by other jobs`,
      );
    case scriptCodes.notInState:
      return new JobNotInStateError(`${operation}: ${subject} is not in the state it needs`);
    case scriptCodes.childFailed:
      return new UnexpectedReplyError(`${operation}: a child of ${subject} failed`);
    default:
      return new UnexpectedReplyError(`${operation}: ${subject}: unexpected script code ${code}`);
  }
}

/** Thrown by a processor after `job.moveToDelayed(ts)`: the job waits until then, no attempt is used. */
export class DelayedError extends QueueError {
  override name = "DelayedError" as const;
}

/** Thrown by a processor after `worker.rateLimit(ms)`: the job goes back to the front of the line. */
export class RateLimitError extends QueueError {
  override name = "RateLimitError" as const;
}

/** Thrown by a processor after `job.moveToWaitingChildren()` returned true. */
export class WaitingChildrenError extends QueueError {
  override name = "WaitingChildrenError" as const;
}

/** Thrown by a processor to fail the job at once, whatever attempts remain. */
export class UnrecoverableError extends QueueError {
  override name = "UnrecoverableError" as const;
}

/** The attempt ran past its time limit (`opts.timeout` or the worker's default). */
export class TimeoutError extends QueueError {
  override name = "TimeoutError" as const;
}

/** The worker no longer holds the job's lease: another worker or the stalled check took it. */
export class LeaseLostError extends QueueError {
  override name = "LeaseLostError" as const;
}

/**
 * A running job was cancelled from elsewhere (`queue.cancelJob`): `job.signal` fires with this error,
 * and the job ends failed with the cancel's reason (no retry) unless its processor returns normally.
 */
export class JobCancelledError extends QueueError {
  override name = "JobCancelledError" as const;
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`job cancelled: ${reason}`, options);
  }
}

/** A call reached a Queue, Worker, FlowProducer or QueueEvents after its `close()`. */
export class ClosedError extends QueueError {
  override name = "ClosedError" as const;
}

/** A BullMQ method that cannot exist over Redis's HTTP API (the message says why and what to use). */
export class NotSupportedError extends QueueError {
  override name = "NotSupportedError" as const;
}
