/**
 * `GET /queues/:queue/jobs/:id?wait=<ms>`: the HTTP twin of `job.waitUntilFinished`. The requests of
 * one app share one read of each queue's event stream a round (job-watch.ts). At events level `none`
 * (nothing to read there), or with a client that cannot read streams, each request polls its job
 * hash for `finishedOn` instead (one HGETALL per poll, every 100 ms at first and at most every second).
 */
import type { Context } from "hono";
import { isShardMap, type RedisPort, toRedisPort, type UpstashRedisLike } from "../../core/index.ts";
import { jobKey } from "../../core/internal.ts";
import { type JobWaitHandle, JobWatch } from "./job-watch.ts";
import type { HttpSettings } from "./options.ts";

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

/** Starts a request's wait for a job: register, read the job, then `until` unless it is done. */
export type StartWait = (queue: string, id: string) => JobWaitHandle;

/** The app's way to wait: the shared stream watch, or per-request hash polls where it cannot read. */
export function jobWaits(settings: Pick<HttpSettings, "redis" | "prefix" | "retry" | "events">): StartWait {
  const { redis } = settings;
  if (isShardMap(redis)) {
    // One watch per database, made at its first wait: a queue's events stream is on its database.
    const byDatabase = new Map<string, StartWait>();
    return (queue, id) => {
      const database = redis.databaseOf(queue);
      let start = byDatabase.get(database);
      if (!start) {
        start = jobWaits({ ...settings, redis: redis.database(database) });
        byDatabase.set(database, start);
      }
      return start(queue, id);
    };
  }
  const port = toRedisPort(redis, settings.retry);
  if (settings.events !== "none" && JobWatch.canWatch(port)) {
    const watch = new JobWatch(port, settings.prefix);
    return (queue, id) => watch.start(queue, id);
  }
  return (queue, id) => ({
    until: (deadline, signal) =>
      untilFinished({
        redis: port,
        prefix: settings.prefix,
        queue,
        id,
        deadline,
        ...(signal ? { signal } : {}),
      }),
    stop: () => {},
  });
}
