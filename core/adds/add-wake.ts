/**
 * What an add asks of whatever runs the queue's jobs (Queue's `wake` option, the HTTP API's and the
 * producers' kick): start now when it created a job ready to run, or be up when its earliest new
 * delayed job is due, if that comes within `withinMs` (before the sweeper's next tick would see it).
 */
import { Checker, defaultTickMs } from "../validate.ts";
import type { AddOutcome, NewJob } from "./add-types.ts";

export interface WakeHint {
  /** A delayed job is due then (ms): the woken worker waits for it. */
  wakeAt?: number;
}

/** The sweeper's production tick: later than this, the tick promotes the job on time anyway. */
export const wakeWithinMs = defaultTickMs;

/** The hint for an add's created jobs, or undefined when nothing it made needs a worker soon. */
export function wakeHint(
  jobs: readonly NewJob[],
  outcomes: readonly AddOutcome[],
  now: number,
  withinMs = wakeWithinMs,
): WakeHint | undefined {
  let wakeAt: number | undefined;
  for (const [i, job] of jobs.entries()) {
    if (outcomes[i]?.outcome !== "created") continue;
    if (job.placement === "wait" || job.placement === "lifo" || job.placement === "prioritized") return {};
    if (job.placement !== "delayed") continue;
    const due = job.timestamp + Number(job.opts.delay ?? 0);
    if (due <= now + withinMs && (wakeAt === undefined || due < wakeAt)) wakeAt = due;
  }
  return wakeAt === undefined ? undefined : { wakeAt };
}

type Wake = (queueName: string, hint: WakeHint) => Promise<void> | void;

/** Calls `wake` (when there is one) with the add's hint, when it has one. */
export async function wakeAfterAdd(
  wake: Wake | undefined,
  queueName: string,
  jobs: readonly NewJob[],
  outcomes: readonly AddOutcome[],
  now: number,
): Promise<void> {
  const hint = wake && wakeHint(jobs, outcomes, now);
  if (hint) await wake(queueName, hint);
}

/** The options as given, once their `wake` is a function or absent. */
export function checkWake<T extends { wake?: unknown }>(options: T, context: string): T {
  if (options?.wake !== undefined && typeof options.wake !== "function")
    new Checker(context).fail("wake", "a function (queueName, { wakeAt? }) => Promise<void>", options.wake);
  return options;
}
