/**
 * Queue-wide settings and the small reads that go with them, stored where BullMQ 6.7.0 keeps them:
 * the manual rate limit (`{P}limiter`), global concurrency and global rate limit (`{P}meta`),
 * deduplication windows (`{P}de:<id>`) and the metrics BullMQ workers keep (`{P}metrics:*`).
 */

import {
  decodeDeduplicationKey,
  decodeGetMetrics,
  decodeGetRateLimitTtl,
  decodeSetRateLimit,
  decodeUpdateQueueMeta,
  deduplicationKey,
  getMetrics as getMetricsScript,
  getRateLimitTtl as getRateLimitTtlScript,
  setRateLimit,
  type UpdateQueueMetaArgs,
  updateQueueMeta,
} from "../redis/generated/scripts.ts";
import { deduplicationKey as dedupKeyOf, metricsKeys, queueKeys } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import { Checker } from "../validate.ts";

/** BullMQ's `getMetrics` answer. */
export interface Metrics {
  meta: { count: number; prevTS: number; prevCount: number };
  /** Jobs per minute, newest first. */
  data: number[];
  /** How many points there are in all. */
  count: number;
}

function checker(context: QueueContext, operation: string): Checker {
  return new Checker(`Queue "${context.queueName}": ${operation}`);
}

/** BullMQ's `Queue.rateLimit(ms)`: no worker of the queue starts a job for `ms` ms. */
export async function rateLimit(context: QueueContext, ms: number): Promise<void> {
  checker(context, "rateLimit").integer("expireTimeMs", ms, 1);
  const keys = queueKeys(context.prefix, context.queueName);
  decodeSetRateLimit(await runScript(context.port, setRateLimit, { limiter: keys.limiter }, { ms }));
}

/** BullMQ's `Queue.removeRateLimitKey()`: deletes the limiter; 1 when there was one, else 0. */
export async function removeRateLimitKey(context: QueueContext): Promise<number> {
  const keys = queueKeys(context.prefix, context.queueName);
  const reply = await runScript(context.port, setRateLimit, { limiter: keys.limiter }, { ms: 0 });
  return decodeSetRateLimit(reply, ["removed"]).count;
}

/**
 * BullMQ's `Queue.getRateLimitTtl(maxJobs)`: with `maxJobs` (or the global max), the ms the limit
 * still holds once that many jobs started, else 0; with neither, the limiter's PTTL (-2 for none).
 */
export async function getRateLimitTtl(context: QueueContext, maxJobs?: number): Promise<number> {
  if (maxJobs !== undefined) checker(context, "getRateLimitTtl").integer("maxJobs", maxJobs, 1);
  const keys = queueKeys(context.prefix, context.queueName);
  const reply = decodeGetRateLimitTtl(
    await runScript(context.port, getRateLimitTtlScript, keys, { maxJobs: maxJobs ?? 0 }),
  );
  // PTTL's own answers (no limiter, no expiry) are BullMQ's answers too.
  return reply.form === "ttl" ? reply.ttl : reply.code;
}

async function updateMeta(
  context: QueueContext,
  remove: boolean,
  fields: [UpdateQueueMetaArgs["fields"][number]["field"], number][],
): Promise<void> {
  const keys = queueKeys(context.prefix, context.queueName);
  decodeUpdateQueueMeta(
    await runScript(
      context.port,
      updateQueueMeta,
      { meta: keys.meta },
      { remove: remove ? "1" : "", fields: fields.map(([field, value]) => ({ field, value })) },
    ),
  );
}

async function readMeta(context: QueueContext): Promise<Map<string, string>> {
  const flat = await context.port.hgetall(queueKeys(context.prefix, context.queueName).meta);
  const meta = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) meta.set(flat[i] as string, flat[i + 1] as string);
  return meta;
}

/** BullMQ's `setGlobalConcurrency(n)`: at most `n` jobs of the queue are active at once, over all workers. */
export async function setGlobalConcurrency(context: QueueContext, concurrency: number): Promise<void> {
  checker(context, "setGlobalConcurrency").integer("concurrency", concurrency, 1);
  await updateMeta(context, false, [["concurrency", concurrency]]);
}

export async function removeGlobalConcurrency(context: QueueContext): Promise<void> {
  await updateMeta(context, true, [["concurrency", 0]]);
}

/** The global concurrency, or null when none is set (BullMQ's `getGlobalConcurrency`). */
export async function getGlobalConcurrency(context: QueueContext): Promise<number | null> {
  const value = (await readMeta(context)).get("concurrency");
  return value ? Number(value) : null;
}

/** BullMQ's `setGlobalRateLimit(max, duration)`: at most `max` jobs start per `duration` ms, over all workers. */
export async function setGlobalRateLimit(
  context: QueueContext,
  max: number,
  duration: number,
): Promise<void> {
  const check = checker(context, "setGlobalRateLimit");
  check.integer("max", max, 1);
  check.integer("duration", duration, 1);
  await updateMeta(context, false, [
    ["max", max],
    ["duration", duration],
  ]);
}

export async function removeGlobalRateLimit(context: QueueContext): Promise<void> {
  await updateMeta(context, true, [
    ["max", 0],
    ["duration", 0],
  ]);
}

/** The global rate limit, or null when none is set (BullMQ's `getGlobalRateLimit`). */
export async function getGlobalRateLimit(
  context: QueueContext,
): Promise<{ max: number; duration: number } | null> {
  const meta = await readMeta(context);
  const max = meta.get("max");
  const duration = meta.get("duration");
  return max && duration ? { max: Number(max), duration: Number(duration) } : null;
}

async function dedupCall(context: QueueContext, operation: string, id: string, remove: boolean) {
  checker(context, operation).string("id", id);
  const key = dedupKeyOf(context.prefix, context.queueName, id);
  return runScript(context.port, deduplicationKey, { key }, { remove: remove ? "1" : "" });
}

/** BullMQ's `getDeduplicationJobId(id)`: the job that owns the window, or null. */
export async function getDeduplicationJobId(context: QueueContext, id: string): Promise<string | null> {
  const reply = await dedupCall(context, "getDeduplicationJobId", id, false);
  return decodeDeduplicationKey(reply, ["owner"]).jobId;
}

/**
 * BullMQ's `Queue.removeDeduplicationKey(id)`: ends the window whichever job owns it, so the next
 * add with that id creates a job. Returns 1 when there was one, else 0.
 */
export async function removeDeduplicationKey(context: QueueContext, id: string): Promise<number> {
  return decodeDeduplicationKey(await dedupCall(context, "removeDeduplicationKey", id, true), ["removed"])
    .count;
}

/** BullMQ's `getMetrics(type, start, end)`: what BullMQ workers with `metrics` on recorded. */
export async function getMetrics(
  context: QueueContext,
  type: "completed" | "failed",
  start = 0,
  end = -1,
): Promise<Metrics> {
  const check = checker(context, "getMetrics");
  if (type !== "completed" && type !== "failed") check.fail("type", "completed or failed", type);
  check.integer("start", start, -Number.MAX_SAFE_INTEGER);
  check.integer("end", end, -Number.MAX_SAFE_INTEGER);
  const { counters, points, pointCount } = decodeGetMetrics(
    await runScript(context.port, getMetricsScript, metricsKeys(context.prefix, context.queueName, type), {
      start,
      stop: end,
    }),
  );
  // BullMQ workers write these; a field that is missing or no number reads as 0, as in BullMQ.
  const counter = (value: string | null) => Number.parseInt(value ?? "0", 10) || 0;
  return {
    meta: {
      count: counter(counters.count),
      prevTS: counter(counters.prevTS),
      prevCount: counter(counters.prevCount),
    },
    data: points.map((point) => Number(point) || 0),
    count: pointCount,
  };
}
