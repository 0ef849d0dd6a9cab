/**
 * The maintenance suites' rig: two queues under one fresh prefix, `b` and `n`, given the same history
 * (written by nimbusq, whose layout is BullMQ's), then one operated on by the real bullmq@6.7.0 and the
 * other by nimbusq; `picture` shows everything an operation can touch, in a form where the two queues
 * compare equal when they were handled alike.
 */
import { Queue as BullQueue } from "bullmq";
import type { Redis as IORedis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import { Queue } from "../../core/index.ts";
import { bullConnection } from "./bullmq-peer.ts";
import { keysUnder, sharedConnection, sharedRedis, uniquePrefix } from "./stack.ts";

export let direct: IORedis;
const closers: (() => Promise<unknown>)[] = [];

/** Registers the shared connection and closes what each test opened. */
export function useTwins(): void {
  beforeAll(() => {
    direct = sharedConnection();
  });
  afterAll(() => direct.disconnect());
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });
}

export type Side = "b" | "n";
export const sides: Side[] = ["b", "n"];

export interface Twins {
  prefix: string;
  /** nimbusq's Queue over HTTP for a side's queue (or another queue name under the prefix). */
  queue(name: string, clock?: () => number): Queue;
  /** BullMQ's Queue for a side's queue (or another queue name). */
  bull(name: string): BullQueue;
  key(name: string, suffix: string): string;
}

export function twins(label = "m"): Twins {
  const prefix = uniquePrefix(label);
  const bulls = new Map<string, BullQueue>();
  return {
    prefix,
    queue: (name, clock) => new Queue(name, { redis: sharedRedis(), prefix, ...(clock ? { clock } : {}) }),
    bull: (name) => {
      let queue = bulls.get(name);
      if (!queue) {
        const made = new BullQueue(name, { connection: bullConnection(), prefix });
        closers.push(() => made.close());
        bulls.set(name, made);
        queue = made;
      }
      return queue;
    },
    key: (name, suffix) => `${prefix}:${name}:${suffix}`,
  };
}

/** The id of the last event in a queue's stream, to compare only what an operation wrote. */
export async function lastEventId(prefix: string, name: string): Promise<string> {
  const last = await direct.xrevrange(`${prefix}:${name}:events`, "+", "-", "COUNT", 1);
  return last[0]?.[0] ?? "0-0";
}

/** The events written after `since`, as field lists. */
export async function eventsSince(prefix: string, name: string, since = "0-0"): Promise<string[][]> {
  const entries = await direct.xrange(`${prefix}:${name}:events`, `(${since}`, "+");
  return entries.map(([, fields]) => fields);
}

const clockFields = new Set(["timestamp", "processedOn", "finishedOn"]);
const ignored = /^(meta|events|nq-req:.*|nq:.*|stalled-check)$/;

/**
 * Everything under one queue but its meta, events and nimbusq's own keys: lists in order, sorted sets
 * with scores (finished sets without, their scores being clocks), job hashes with clock fields blanked
 * and the queue's own name replaced by `Q` (also in `<name>-…` queues it names), so that `b` and `n`
 * compare equal. A `<side>-parents` queue passes its side, whose job keys it names, too.
 */
/**
 * Stack traces without Node's own scheduling frames (`process.processTicksAndRejections`) and cut to
 * eight frames: whether an attempt starts from a microtask or a timer depends on the machine's load,
 * and an extra frame pushes the last one past V8's ten.
 */
function withoutSchedulerFrames(stacktrace: string): string {
  let traces: string[];
  try {
    traces = JSON.parse(stacktrace) as string[];
  } catch {
    return stacktrace;
  }
  const cut = (trace: string) =>
    trace
      .split("\n")
      .filter((line) => !line.includes("(node:internal"))
      .slice(0, 9)
      .join("\n");
  return JSON.stringify(traces.map(cut));
}

export async function picture(prefix: string, name: string, side?: string): Promise<Record<string, unknown>> {
  const p = `${prefix}:${name}:`;
  const out: Record<string, unknown> = {};
  const normalize = (text: string) =>
    text
      .replaceAll(p, "{P}")
      .replaceAll(`${prefix}:${side ?? p}:`, "{S}:")
      .replaceAll(`${prefix}:${side ?? p}"`, '{S}"')
      .replaceAll(`${prefix}:${name}"`, '{Q}"')
      .replaceAll(`${prefix}:${name}-`, "{Q}-");
  for (const key of await keysUnder(direct, `${prefix}:${name}`)) {
    const suffix = key.slice(p.length);
    if (!key.startsWith(p) || ignored.test(suffix)) continue;
    const type = await direct.type(key);
    let value: unknown;
    if (type === "list") value = await direct.lrange(key, 0, -1);
    else if (type === "set") value = (await direct.smembers(key)).map(normalize).sort();
    else if (type === "zset") {
      const finished = ["completed", "failed"].includes(suffix) || suffix.endsWith(":unsuccessful");
      value = finished
        ? (await direct.zrange(key, 0, -1)).map(normalize)
        : await direct.zrange(key, 0, -1, "WITHSCORES");
    } else if (type === "hash") {
      const hash = await direct.hgetall(key);
      value = Object.fromEntries(
        Object.entries(hash).map(([field, v]) => [
          normalize(field),
          clockFields.has(field) ? "<ms>" : normalize(field === "stacktrace" ? withoutSchedulerFrames(v) : v),
        ]),
      );
    } else if (type === "string") value = await direct.get(key);
    else value = type;
    out[suffix] = value;
  }
  return out;
}

/** Adds the same jobs to both sides through nimbusq (the same ids, timestamps and placement). */
export async function sameJobs(t: Twins, add: (queue: Queue, side: Side) => Promise<unknown>): Promise<void> {
  for (const side of sides) await add(t.queue(side), side);
}

/** Both pictures, asserting nothing: tests compare them. */
export async function pictures(t: Twins): Promise<[Record<string, unknown>, Record<string, unknown>]> {
  return [await picture(t.prefix, "b"), await picture(t.prefix, "n")];
}

export async function keysOf(prefix: string, name: string): Promise<string[]> {
  const p = `${prefix}:${name}:`;
  return (await keysUnder(direct, `${prefix}:${name}`))
    .filter((key) => key.startsWith(p))
    .map((k) => k.slice(p.length));
}

/** `SCAN MATCH <prefix>:<name>:*`, every key BullMQ or Bull Board could take for the queue's, sorted. */
export async function scanQueue(
  prefix: string,
  name: string,
  connection: IORedis = direct,
): Promise<string[]> {
  return keysUnder(connection, `${prefix}:${name}`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
