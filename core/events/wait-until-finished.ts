/**
 * BullMQ's `job.waitUntilFinished(queueEvents, ttl)`: listens for the job's `completed` / `failed`
 * event, then reads the job once so that a job that finished before the call settles too.
 */
import { JobNotFoundError, QueueError, TimeoutError, ValidationError } from "../errors.ts";
import type { AnyQueueEvents } from "./queue-events.ts";

/**
 * How a job that failed for good rejects `waitUntilFinished`: the message is the job's `failedReason`
 * (as BullMQ's `new Error(failedReason)`), with the job and its queue alongside.
 */
export class JobFailedError extends QueueError {
  override name = "JobFailedError" as const;

  constructor(
    readonly failedReason: string,
    readonly jobId: string,
    readonly queueName: string,
  ) {
    super(failedReason);
  }
}

/** The job waited for: its id and where it lives. */
export interface FinishingJob {
  id: string;
  queueName: string;
  context: { prefix: string };
}

/** What a finished job tells its waiter (a Job has these fields). */
export interface FinishedFields<TResult> {
  returnvalue?: TResult | null;
  failedReason?: string;
}

/** The job and its state read together (one call), or undefined when the job no longer exists. */
export type ReadJobWithState<TResult> = () => Promise<
  { job: FinishedFields<TResult>; state: string } | undefined
>;

/**
 * Resolves with the job's return value once it completes, rejects with a JobFailedError when it fails
 * for good, with a TimeoutError after `ttl` ms (no limit when 0 or left out, as BullMQ), with a
 * JobNotFoundError when the job is gone (removed, or removed on completion before the call) and with
 * a ClosedError when the QueueEvents closes first.
 */
export async function waitUntilFinished<TResult>(
  job: FinishingJob,
  read: ReadJobWithState<TResult>,
  queueEvents: AnyQueueEvents,
  ttl?: number,
): Promise<TResult> {
  const subject = `job "${job.id}" in queue "${job.queueName}"`;
  const context = `waitUntilFinished (${subject})`;
  if (ttl !== undefined && (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl < 0))
    throw new ValidationError("ttl", "a number of milliseconds, 0 or more (0: no limit)", context);
  if (queueEvents.name !== job.queueName || queueEvents.prefix !== job.context.prefix)
    throw new ValidationError(
      "queueEvents",
      `a QueueEvents of queue "${job.queueName}" with prefix "${job.context.prefix}" ` +
        `(got queue "${queueEvents.name}" with prefix "${queueEvents.prefix}")`,
      context,
    );
  return await new Promise<TResult>((resolve, reject) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopOnClose = () => {};
    const release = queueEvents.holdInterval();
    const completedEvent = `completed:${job.id}` as const;
    const failedEvent = `failed:${job.id}` as const;
    const onCompleted = ({ returnvalue }: { returnvalue: unknown }) =>
      settle(() => resolve(returnvalue as TResult));
    const onFailed = ({ failedReason }: { failedReason: string }) =>
      settle(() => reject(new JobFailedError(failedReason, job.id, job.queueName)));
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      queueEvents.off(completedEvent, onCompleted);
      queueEvents.off(failedEvent, onFailed);
      stopOnClose();
      release();
      finish();
    };
    queueEvents.on(completedEvent, onCompleted);
    queueEvents.on(failedEvent, onFailed);
    // A QueueEvents closed already calls the hook at once.
    stopOnClose = queueEvents.onClose(() =>
      settle(() => reject(queueEvents.closedError(`waitUntilFinished of ${subject}`))),
    );
    if (ttl && !settled)
      timer = setTimeout(
        () => settle(() => reject(new TimeoutError(`${context}: not finished within ${ttl} ms`))),
        ttl,
      );
    // Once the QueueEvents reads from a fixed point, an event can no longer slip by: a job that
    // finished earlier is found by this read, one that finishes later by its event.
    const check = async () => {
      await queueEvents.waitUntilReady();
      if (settled) return;
      const found = await read();
      if (settled) return;
      if (found?.state === "completed") settle(() => resolve(found.job.returnvalue as TResult));
      else if (found?.state === "failed")
        settle(() => reject(new JobFailedError(found.job.failedReason ?? "", job.id, job.queueName)));
      else if (!found) {
        // Removed on completion (or failure) just now: its event is in the stream; wait for the
        // reader to pass it before calling the job gone.
        await queueEvents.caughtUp();
        settle(() =>
          reject(
            new JobNotFoundError(`${context}: the job does not exist (removed, or removed when it finished)`),
          ),
        );
      }
    };
    if (!settled) check().catch((error: unknown) => settle(() => reject(error)));
  });
}
