/**
 * How QueueEvents reads the stream over HTTP: through a trimmed or deleted stream without a gap
 * reported twice or a crash, past a failed read, `close()` that waits for the read in flight and
 * stops reading, and what an idle QueueEvents costs in billed commands (counted by the REST server).
 */
import type { Redis as IORedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { nextPollDelay } from "../../core/events/queue-events-stream.ts";
import { ClosedError, Queue, QueueEvents, type RedisPort, toRedisPort } from "../../core/index.ts";
import { sleep, waitFor } from "../support/bullmq-peer.ts";
import { type Heard, record } from "../support/queue-events.ts";
import { directConnectionForFile, sharedRedis, startPrivateStack, uniquePrefix } from "../support/stack.ts";

const direct: IORedis = directConnectionForFile();
const opened: QueueEvents[] = [];
afterAll(async () => {
  await Promise.all(opened.map((events) => events.close()));
});

/** The shared client's port with `xrange` replaced (the rest goes to the REST server unchanged). */
function portWith(
  xrange: (
    base: Required<RedisPort>["xrange"],
    ...args: Parameters<Required<RedisPort>["xrange"]>
  ) => ReturnType<Required<RedisPort>["xrange"]>,
): RedisPort {
  const base = toRedisPort(sharedRedis());
  const read = base.xrange as Required<RedisPort>["xrange"];
  return { ...base, xrange: (...args) => xrange(read, ...args) };
}

function open(
  queue: string,
  prefix: string,
  port: RedisPort,
  options: Partial<ConstructorParameters<typeof QueueEvents>[1]> = {},
) {
  const events = new QueueEvents(queue, { redis: port, prefix, poll: { minMs: 10, maxMs: 50 }, ...options });
  opened.push(events);
  return events;
}

async function writeWaiting(key: string, from: number, to: number): Promise<void> {
  for (let jobId = from; jobId <= to; jobId++)
    await direct.xadd(key, "*", "event", "waiting", "jobId", String(jobId));
}

const jobIds = (heard: readonly Heard[]) =>
  heard.map((entry) => Number((entry.args as { jobId: string }).jobId));

describe("QueueEvents through a trimmed stream", () => {
  it("continues from the oldest entry left when its position was trimmed away, nothing twice", async () => {
    const prefix = uniquePrefix("qe");
    const key = `${prefix}:q:events`;
    await writeWaiting(key, 1, 50);
    let reads = 0;
    const port = portWith(async (read, ...args) => {
      reads += 1;
      // Between the first page (1…10) and the second, the stream is cut to its last 15 entries.
      if (reads === 2) await direct.xtrim(key, "MAXLEN", 15);
      return read(...args);
    });
    const events = open("q", prefix, port, { lastEventId: "0-0", poll: { minMs: 10, maxMs: 50, count: 10 } });
    const errors: Error[] = [];
    events.on("error", (error) => errors.push(error));
    const heard = record(events, ["waiting"]);
    await waitFor(() => heard.length >= 25, "25 events");
    await sleep(150);
    expect(jobIds(heard)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => i + 1),
      ...Array.from({ length: 15 }, (_, i) => i + 36),
    ]);
    expect(errors).toEqual([]);

    // The whole stream deleted (e.g. obliterated) and written again: the reader goes on.
    await direct.del(key);
    await writeWaiting(key, 51, 53);
    await waitFor(() => heard.length === 28, "the events written after the delete");
    expect(jobIds(heard).slice(25)).toEqual([51, 52, 53]);
    const ids = heard.map((entry) => entry.id as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(errors).toEqual([]);
  });

  it("reports a failed read as an error event and reads on", async () => {
    const prefix = uniquePrefix("qe");
    await writeWaiting(`${prefix}:q:events`, 1, 3);
    let reads = 0;
    const port = portWith(async (read, ...args) => {
      reads += 1;
      if (reads === 1) throw new Error("network down for one read");
      return read(...args);
    });
    const events = open("q", prefix, port, { lastEventId: "0-0" });
    const errors: Error[] = [];
    events.on("error", (error) => errors.push(error));
    const heard = record(events, ["waiting"]);
    await waitFor(() => heard.length === 3, "three events");
    expect(errors.map((error) => error.message)).toEqual(["network down for one read"]);
    expect(jobIds(heard)).toEqual([1, 2, 3]);
  });
});

describe("QueueEvents.close", () => {
  it("waits for the read in flight, is idempotent, stops reading and refuses later calls", async () => {
    const prefix = uniquePrefix("qe");
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    let finished = 0;
    const port = portWith(async (read, ...args) => {
      started += 1;
      await gate;
      const entries = await read(...args);
      finished += 1;
      return entries;
    });
    const events = open("q", prefix, port);
    await events.waitUntilReady();
    await waitFor(() => started === 1, "a read in flight");
    expect(events.isRunning()).toBe(true);
    let closed = false;
    const closing = events.close();
    void closing.then(() => {
      closed = true;
    });
    expect(events.close()).toBe(closing);
    await sleep(100);
    expect(closed).toBe(false);
    release();
    await closing;
    expect(finished).toBe(1);
    await sleep(200);
    expect(started).toBe(1);
    expect(events.isRunning()).toBe(false);
    await expect(events.waitUntilReady()).rejects.toBeInstanceOf(ClosedError);
    await expect(events.run()).rejects.toBeInstanceOf(ClosedError);
  });

  it("with autorun false reads nothing until run(), which resolves on close", async () => {
    const prefix = uniquePrefix("qe");
    let reads = 0;
    const port = portWith(async (read, ...args) => {
      reads += 1;
      return read(...args);
    });
    const events = open("q", prefix, port, { autorun: false, lastEventId: "0-0" });
    const heard = record(events, ["waiting"]);
    await writeWaiting(`${prefix}:q:events`, 1, 2);
    await sleep(100);
    expect(reads).toBe(0);
    const running = events.run();
    await expect(events.run()).rejects.toThrow(/already running/);
    await waitFor(() => heard.length === 2, "two events");
    await events.close();
    await expect(running).resolves.toBeUndefined();
  });
});

describe("QueueEvents idle cost", () => {
  it("one XRANGE per poll.maxMs once idle: billed commands counted by the REST server", async () => {
    const stack = await startPrivateStack();
    try {
      const minMs = 10;
      const maxMs = 100;
      const events = new QueueEvents("idle", {
        redis: stack.redis,
        prefix: uniquePrefix("qe"),
        poll: { minMs, maxMs },
      });
      await events.waitUntilReady();
      stack.rest.resetStats();
      const from = Date.now();
      await sleep(2_000);
      const stats = stack.rest.stats();
      const idleMs = Date.now() - from;
      await events.close();
      // Reads are at least maxMs apart once the interval has doubled up from minMs (4 shorter waits).
      const ramp = Math.ceil(Math.log2(maxMs / minMs));
      const bound = Math.floor(idleMs / maxMs) + 1 + ramp;
      expect(stats.billed).toBe(stats.commands);
      expect(Object.keys(stats.byCommand)).toEqual(["xrange"]);
      expect(stats.commands).toBeGreaterThan(0);
      expect(stats.commands).toBeLessThanOrEqual(bound);
      // Closed: no read after that.
      const after = stack.rest.stats().commands;
      await sleep(300);
      expect(stack.rest.stats().commands).toBe(after);
    } finally {
      await stack.stop();
    }
  });
});

describe("QueueEvents idle back-off", () => {
  it("by default an idle listener settles at one read per 5 s: 720 billed commands an hour", () => {
    const bounds = { minMs: 100, maxMs: 1000, idleMs: 5000 };
    const waits: number[] = [];
    let delay = 0;
    for (let read = 0; read < 20; read++) {
      delay = nextPollDelay(delay, 0, 500, bounds);
      waits.push(delay);
    }
    expect(waits.slice(0, 7)).toEqual([100, 200, 400, 800, 1600, 3200, 5000]);
    expect(3_600_000 / (waits.at(-1) as number)).toBe(720);
    // A pending waitUntilFinished keeps reads at most maxMs apart.
    expect(nextPollDelay(5000, 0, 500, bounds, true)).toBe(1000);
  });

  it("reads back off to idleMs, and a waitUntilFinished pulls them back to maxMs until it settles", async () => {
    const stack = await startPrivateStack();
    try {
      const prefix = uniquePrefix("qe");
      const events = new QueueEvents("idle", {
        redis: stack.redis,
        prefix,
        poll: { minMs: 10, maxMs: 50, idleMs: 500 },
      });
      await events.waitUntilReady();
      await sleep(1_000);
      stack.rest.resetStats();
      await sleep(2_000);
      const idleReads = stack.rest.stats().commands;
      // Two seconds at one read per 500 ms (a read in flight at either end at most).
      expect(idleReads).toBeGreaterThanOrEqual(3);
      expect(idleReads).toBeLessThanOrEqual(5);
      const queue = new Queue("idle", { redis: stack.redis, prefix });
      const job = await queue.add("later", {}, { delay: 60_000 });
      const waiting = job.waitUntilFinished(events, 1_500).catch((error: Error) => error.name);
      await sleep(200);
      stack.rest.resetStats();
      await sleep(1_000);
      // At most maxMs apart while the wait is pending (reads of the stream, not counting the job read).
      expect(stack.rest.stats().byCommand.xrange ?? 0).toBeGreaterThanOrEqual(15);
      expect(await waiting).toBe("TimeoutError");
      await sleep(1_000);
      stack.rest.resetStats();
      await sleep(1_000);
      expect(stack.rest.stats().commands).toBeLessThanOrEqual(3);
      await events.close();
    } finally {
      await stack.stop();
    }
  });
});
