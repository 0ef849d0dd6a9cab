/**
 * The retry policy of every Redis call: a transient failure (core/redis/call-errors.ts) is asked
 * again — the same request, so the same request token, whose replay guard answers a second run with
 * the first one's result — with backoff, until the window is spent or the caller's deadline is near;
 * a final one is thrown at once. Retries keep the arguments of the first attempt, its `now`
 * included: a call retried for ten seconds acts as of when it was first sent.
 */
import { classifyFailure, RedisCallError } from "./call-errors.ts";

export interface RedisRetryOptions {
  /**
   * How long transient failures are retried (ms, from the first attempt; default 30 s). Within it a
   * Redis restart, a failover, a proxy's 5xx or lost answers cost time, not jobs: leases are
   * extended, finished jobs acked, adds answered. 0: only the client's own retries.
   */
  windowMs?: number;
  /** Never wait past this moment (epoch ms), e.g. a Lambda invocation's end less a margin. */
  deadline?: () => number | undefined;
  /** Once it fires (the owner's `close()`), a failure is not retried any more. */
  signal?: AbortSignal;
  /** Told before each wait (a worker emits it as an `error` event). */
  onRetry?: (error: RedisCallError, attempt: number, waitMs: number) => void;
}

export const defaultRetryWindowMs = 30_000;
/** The first wait; each later one doubles, up to the cap, with up to a quarter taken off at random. */
const firstWaitMs = 100;
const maxWaitMs = 4000;

/** The wait before attempt `attempt + 1` (pure; `random` in [0, 1)). */
export function retryWait(attempt: number, random: number): number {
  const base = Math.min(maxWaitMs, firstWaitMs * 2 ** attempt);
  return Math.round(base * (1 - random / 4));
}

export interface CallSite {
  command: string;
  host?: string;
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `call`, retrying transient failures within the window; every failure leaves as a RedisCallError. */
export async function withRetries<T>(
  call: () => Promise<T>,
  site: CallSite,
  options: RedisRetryOptions = {},
): Promise<T> {
  const clock = site.clock ?? Date.now;
  const started = clock();
  const windowEnd = started + (options.windowMs ?? defaultRetryWindowMs);
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (error instanceof RedisCallError) throw error;
      const failure = classifyFailure(error);
      const now = clock();
      const wrapped = new RedisCallError({
        command: site.command,
        ...(site.host ? { host: site.host } : {}),
        original: error,
        failure,
        attempts: attempt + 1,
        elapsedMs: now - started,
      });
      if (!failure.transient) throw wrapped;
      const wait = retryWait(attempt, (site.random ?? Math.random)());
      const deadline = Math.min(windowEnd, options.deadline?.() ?? Number.POSITIVE_INFINITY);
      if (now + wait > deadline || options.signal?.aborted) throw wrapped;
      options.onRetry?.(wrapped, attempt + 1, wait);
      await (site.sleep ?? pause)(wait);
    }
  }
}
