/**
 * Each Redis request's timeout, derived from the invocation's remaining time: the configured timeout
 * (10 s), but never later than the invocation's end less a margin, so a Redis that hangs ends in the
 * app's own error answer and log line rather than Lambda's "Task timed out", which loses both. A
 * Lambda container runs one invocation at a time, so the deadline is the container's.
 *
 * @example
 * const redis = createRedis({ timeoutFor: requestTimeoutMs });
 * export const handler = async (event, context) => { setInvocationDeadline(context); … };
 */

/** Default per-request timeout (ms), as createRedis's. */
export const defaultRequestTimeoutMs = 10_000;
/** Time kept after a timed-out request for the error answer and its log line (ms). */
export const defaultDeadlineMarginMs = 1000;

let deadlineAt: number | undefined;

/** Call at the start of each invocation (the handlers do). */
export function setInvocationDeadline(
  context: { getRemainingTimeInMillis(): number } | undefined,
  now = Date.now(),
): void {
  deadlineAt = context ? now + context.getRemainingTimeInMillis() : undefined;
}

/** The per-request timeout: min(configured, remaining − margin), at least 1 ms. A pure function. */
export function timeoutWithin(
  remainingMs: number | undefined,
  configuredMs = defaultRequestTimeoutMs,
  marginMs = defaultDeadlineMarginMs,
): number {
  if (remainingMs === undefined) return configuredMs;
  return Math.max(1, Math.min(configuredMs, remainingMs - marginMs));
}

/** createRedis's `timeoutFor`: the current invocation's per-request timeout. */
export function requestTimeoutMs(): number {
  return timeoutWithin(deadlineAt === undefined ? undefined : deadlineAt - Date.now());
}

/**
 * The moment retries of a failed Redis call must stop (epoch ms): the invocation's end less the
 * margin, so an outage longer than the invocation ends in the app's own answer. Undefined outside an
 * invocation (a plain Node server): the retry window alone bounds it.
 */
export function retryDeadline(): number | undefined {
  return deadlineAt === undefined ? undefined : deadlineAt - defaultDeadlineMarginMs;
}
