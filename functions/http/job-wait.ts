/**
 * `GET /queues/:queue/jobs/:id?wait=<ms>`: the HTTP twin of `job.waitUntilFinished`. It polls the job
 * hash for `finishedOn` (one HGETALL per poll, every 100 ms at first and at most every second), not
 * the events stream: a poll costs one billed command whatever else the queue is doing (the stream
 * would hand every other job's events to each request), and it works at every events level, `none`
 * included.
 */
import type { Context } from "hono";
import { type RedisPort, toRedisPort, type UpstashRedisLike } from "../../core/index.ts";
import { jobKey } from "../../core/internal.ts";

/** The longest wait a request may ask for: well under the HTTP function's 30 s timeout. */
export const maxWaitMs = 25_000;
/** Left to answer in when the invocation's own time runs short (Lambda). */
const answerMarginMs = 3_000;
const firstPollMs = 100;
const slowestPollMs = 1_000;

/**
 * When the wait must end: `waitMs` after the request started, or earlier when the Lambda invocation
 * (the adapter passes its context) has less time left than that plus a margin to answer in.
 */
export function waitDeadline(c: Context, waitMs: number, startedAt: number): number {
  const lambda = (c.env as { lambdaContext?: { getRemainingTimeInMillis?: () => number } } | undefined)
    ?.lambdaContext;
  const remaining = lambda?.getRemainingTimeInMillis?.();
  const byInvocation =
    typeof remaining === "number" ? startedAt + remaining - answerMarginMs : Number.POSITIVE_INFINITY;
  return Math.min(startedAt + waitMs, byInvocation);
}

const timedOut = Symbol("timed out");

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `read`, or `timedOut` once `deadline` passes first (a slow read never holds the answer back). */
async function beforeDeadline<T>(read: Promise<T>, deadline: number): Promise<T | typeof timedOut> {
  read.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof timedOut>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

function hasField(flat: readonly string[], field: string): boolean {
  for (let i = 0; i < flat.length; i += 2) if (flat[i] === field) return true;
  return false;
}

export interface JobWait {
  redis: UpstashRedisLike | RedisPort;
  prefix: string;
  queue: string;
  id: string;
  deadline: number;
  /** Aborted when the client went away: the polling stops. */
  signal?: AbortSignal;
}

/**
 * Polls until the job's hash has `finishedOn` (completed, or failed for good), the hash is gone, the
 * client left or the deadline passed; the caller then reads the job for its answer.
 */
export async function untilFinished(wait: JobWait): Promise<"finished" | "gone" | "deadline"> {
  const port = toRedisPort(wait.redis);
  const key = jobKey(wait.prefix, wait.queue, wait.id);
  let interval = firstPollMs;
  for (;;) {
    const left = wait.deadline - Date.now();
    if (left <= 0 || wait.signal?.aborted) return "deadline";
    await sleep(Math.min(interval, left));
    if (Date.now() >= wait.deadline) return "deadline";
    const flat = await beforeDeadline(port.hgetall(key), wait.deadline);
    if (flat === timedOut) return "deadline";
    if (flat.length === 0) return "gone";
    if (hasField(flat, "finishedOn")) return "finished";
    interval = Math.min(slowestPollMs, Math.round(interval * 1.5));
  }
}
