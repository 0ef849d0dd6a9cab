/**
 * Backoff between attempts, as BullMQ computes it: `fixed` waits `delay`, `exponential` waits
 * 2^(attempt-1) × delay; `jitter` (0..1) lowers the wait by a random part of up to jitter × wait. A
 * named custom strategy may return -1 for "do not retry". Pure: the random source is injectable.
 */
import type { BackoffOptions } from "../types.ts";

/** A custom strategy: the wait in ms for the coming retry, or -1 to stop retrying. */
export type BackoffStrategy = (attemptsMade: number, type: string, error: Error, job: unknown) => number;

export interface BackoffContext {
  /** Attempts made so far, this failed one included (BullMQ's `attemptsMade + 1`). */
  attemptsMade: number;
  error: Error;
  job: unknown;
  strategies?: Record<string, BackoffStrategy>;
  random?: () => number;
}

/** The wait before the next attempt in ms (0 = retry now), or -1 when the job must not retry. */
export function backoffDelay(backoff: BackoffOptions | undefined, context: BackoffContext): number {
  if (backoff === undefined) return 0;
  const spec = typeof backoff === "number" ? { type: "fixed", delay: backoff } : backoff;
  const base = spec.delay ?? 0;
  let wait: number;
  if (spec.type === "fixed") {
    wait = base;
  } else if (spec.type === "exponential") {
    wait = Math.round(2 ** (context.attemptsMade - 1) * base);
  } else {
    const strategy = context.strategies?.[spec.type];
    if (!strategy)
      throw new Error(
        `unknown backoff strategy "${spec.type}": register it in the worker's backoffStrategies`,
      );
    wait = strategy(context.attemptsMade, spec.type, context.error, context.job);
    if (wait === -1) return -1;
    if (!Number.isFinite(wait) || wait < 0)
      throw new Error(`backoff strategy "${spec.type}" returned ${wait}`);
  }
  if (spec.jitter && spec.jitter > 0 && wait > 0) {
    const random = context.random ?? Math.random;
    wait = Math.floor(wait - random() * spec.jitter * wait);
  }
  return Math.max(0, Math.round(wait));
}
