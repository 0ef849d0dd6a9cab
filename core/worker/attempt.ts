/**
 * One attempt of one job: the processor runs with the job's own abort signal, its time limit (the
 * job's `timeout`, capped by the worker's), and the worker's deadline. Whatever the processor throws
 * becomes an ordinary failure of this job — strings, `undefined`, objects whose getters throw, errors
 * whose `stack` throws — so it can never break the worker or another job.
 */

import { JobCancelledError, LeaseLostError, TimeoutError, UnrecoverableError } from "../errors.ts";
import type { ActiveJob } from "../job/active-job.ts";
import { attemptSpan, endAttemptSpan, withSpan } from "../telemetry/telemetry.ts";
import type { Settled } from "./outcome.ts";

/** Why the worker stops an attempt before the processor returns. */
export type Stop = { kind: "timeout"; ms: number } | { kind: "deadline" } | { kind: "lost" };

export interface AttemptOptions {
  processor: (job: ActiveJob, token?: string, signal?: AbortSignal) => Promise<unknown>;
  /** Epoch ms: an attempt still running then is stopped and handed back. */
  deadline: number;
  clock: () => number;
  defaultTimeoutMs?: number;
  /** No attempt may run longer than this, whatever its own `timeout` says. */
  maxTimeoutMs?: number;
}

function readText(read: () => unknown): string | undefined {
  try {
    const value = read();
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function describe(thrown: unknown): string {
  try {
    if (typeof thrown === "string") return thrown;
    return JSON.stringify(thrown) ?? String(thrown);
  } catch {
    try {
      return String(thrown);
    } catch {
      return "a value that cannot be printed";
    }
  }
}

/**
 * An Error whose name, message and stack are plain strings. Errors that read cleanly are kept as they
 * are (their class decides retries: UnrecoverableError, DelayedError…); others are copied.
 */
export function safeError(thrown: unknown): Error {
  let isError = false;
  try {
    isError = thrown instanceof Error;
  } catch {
    isError = false;
  }
  if (!isError) {
    const error = new Error(`the processor threw a non-Error value: ${describe(thrown)}`);
    error.name = "NonErrorThrown";
    return error;
  }
  const original = thrown as Error;
  const name = readText(() => original.name);
  const message = readText(() => original.message);
  const stack = readText(() => original.stack);
  const readable = (() => {
    try {
      return (
        name !== undefined && message !== undefined && (stack !== undefined || original.stack === undefined)
      );
    } catch {
      return false;
    }
  })();
  if (readable) return original;
  const copy = new Error(message ?? "the processor threw an Error whose message cannot be read");
  copy.name = name ?? "Error";
  copy.stack = stack ?? `${copy.name}: ${copy.message}`;
  return copy;
}

/** The processor with BullMQ 6's arguments: the job, its lock token and the attempt's signal. */
function call(options: AttemptOptions, job: ActiveJob): Promise<unknown> {
  return options.processor(job, job.token, job.signal);
}

/** Runs the attempt; `stopper` receives the function that stops it early (lease lost). */
export async function runAttempt(
  job: ActiveJob,
  options: AttemptOptions,
  stopper: (stop: (reason: Stop) => void) => void,
): Promise<Settled> {
  if (job.deferredFailure !== undefined) {
    return { kind: "threw", error: new UnrecoverableError(job.deferredFailure) };
  }
  // Cancelled before it started (queue.cancelJob): failed with the reason, never run.
  if (job.cancelReason !== undefined)
    return { kind: "threw", error: new JobCancelledError(job.cancelReason) };
  const ownTimeout = Number(job.opts.timeout ?? options.defaultTimeoutMs ?? 0);
  const cap = options.maxTimeoutMs ?? 0;
  const timeoutMs = cap > 0 && (ownTimeout <= 0 || ownTimeout > cap) ? cap : ownTimeout;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stopped = new Promise<Stop>((resolve) => {
    stopper(resolve);
    const untilDeadline = options.deadline - options.clock();
    if (timeoutMs > 0 && timeoutMs <= untilDeadline) {
      timer = setTimeout(() => resolve({ kind: "timeout", ms: timeoutMs }), timeoutMs);
    } else if (Number.isFinite(untilDeadline)) {
      timer = setTimeout(() => resolve({ kind: "deadline" }), Math.max(untilDeadline, 0));
    }
  });
  const { telemetry } = job.context;
  const span = telemetry && attemptSpan(telemetry, job);
  // Called here, not in a later microtask: a processor's synchronous work runs inside the start, where
  // the pipeline's StartGate can see how long it held the event loop.
  let running: Promise<unknown>;
  try {
    running = Promise.resolve(
      span && telemetry ? withSpan(telemetry, span, () => call(options, job)) : call(options, job),
    );
  } catch (thrown) {
    running = Promise.reject(thrown);
  }
  const attempt = running.then(
    (value): Settled => ({ kind: "returned", value }),
    (thrown: unknown): Settled => ({ kind: "threw", error: safeError(thrown) }),
  );
  const first = await Promise.race([attempt, stopped.then((stop) => ({ stop }))]);
  clearTimeout(timer);
  if (span) endAttemptSpan(span, first);
  if (!("stop" in first)) return first;
  const { stop } = first;
  if (stop.kind === "timeout") {
    const error = new TimeoutError(
      `job "${job.id}" in queue "${job.queueName}" timed out after ${stop.ms} ms`,
    );
    job.abortAttempt(error);
    return { kind: "threw", error };
  }
  job.abortAttempt(
    stop.kind === "lost"
      ? new LeaseLostError(`lease lost on job "${job.id}" in queue "${job.queueName}"`)
      : new TimeoutError(`the worker's deadline came before job "${job.id}" finished`),
  );
  return { kind: "handed-back" };
}
