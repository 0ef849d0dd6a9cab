/**
 * BullMQ's getters that users reach for — getJobLogs, getJobState, Job.isCompleted()/isFailed()/…,
 * trimEvents — each checked against the real bullmq@6.7.0 reading the same jobs.
 */
import { Queue as BullQueue } from "bullmq";
import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, ValidationError, Worker } from "../../core/index.ts";
import {
  directConnectionForFile,
  sharedConnectionOptions,
  sharedRedis,
  uniquePrefix,
} from "../support/stack.ts";

const direct = directConnectionForFile();

async function pair(prefix: string) {
  const queue = new Queue("q", { redis: sharedRedis(), prefix });
  const bull = new BullQueue("q", { connection: sharedConnectionOptions(), prefix });
  return { queue, bull, [Symbol.asyncDispose]: () => bull.close() };
}

describe("getJobLogs", () => {
  it("answers every range and order as BullMQ's does", async () => {
    const prefix = uniquePrefix("logs");
    await using both = await pair(prefix);
    const job = await both.queue.add("j", {});
    const logger = async (active: ActiveJob) => {
      for (let i = 0; i < 7; i++) await active.log(`line ${i}`);
      return 1;
    };
    await new Worker("q", logger, { redis: sharedRedis(), prefix }).drain();
    const ranges: [number, number, boolean][] = [
      [0, -1, true],
      [0, -1, false],
      [0, 2, true],
      [0, 2, false],
      [2, 4, true],
      [2, 4, false],
      [5, 100, true],
      [5, 100, false],
      [10, 20, true],
    ];
    for (const [start, end, asc] of ranges) {
      const ours = await both.queue.getJobLogs(job.id, start, end, asc);
      expect(ours, `${start}..${end} asc=${asc}`).toEqual(
        await both.bull.getJobLogs(job.id, start, end, asc),
      );
    }
    expect((await both.queue.getJobLogs(job.id)).count).toBe(7);
    expect(await both.queue.getJobLogs("missing")).toEqual({ logs: [], count: 0 });
  });

  it("refuses bad ranges naming the field", async () => {
    const queue = new Queue("q", { redis: sharedRedis(), prefix: uniquePrefix("logs-bad") });
    const error = await queue.getJobLogs("1", -3).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("start");
  });
});

describe("getJobState and Job.is…()", () => {
  it("agree with BullMQ in every state", async () => {
    const prefix = uniquePrefix("state");
    await using both = await pair(prefix);
    const done = await both.queue.add("c", {});
    const broken = await both.queue.add("f", {});
    const processor = async (job: ActiveJob) => {
      if (job.id === broken.id) throw new Error("boom");
      return "ok";
    };
    await new Worker("q", processor, { redis: sharedRedis(), prefix, concurrency: 1 }).drain();
    const waiting = await both.queue.add("w", {});
    const delayed = await both.queue.add("d", {}, { delay: 60_000 });
    const prioritized = await both.queue.add("p", {}, { priority: 3 });
    const ids = [waiting.id, delayed.id, prioritized.id, done.id, broken.id, "missing"];
    for (const id of ids) expect(await both.queue.getJobState(id)).toBe(await both.bull.getJobState(id));

    const fresh = await both.queue.add("again", {});
    const twin = await both.bull.getJob(fresh.id);
    const mine = await both.queue.getJob(fresh.id);
    if (!twin || !mine) throw new Error("job missing");
    for (const check of [
      "isWaiting",
      "isActive",
      "isDelayed",
      "isCompleted",
      "isFailed",
      "isWaitingChildren",
    ] as const)
      expect(await mine[check](), check).toBe(await twin[check]());
    expect(await (await both.queue.getJob(done.id))?.isCompleted()).toBe(true);
    expect(await (await both.queue.getJob(delayed.id))?.isDelayed()).toBe(true);
  });
});

describe("trimEvents", () => {
  it("trims the stream to about maxLength as BullMQ's does, and refuses a negative length", async () => {
    const prefix = uniquePrefix("trim");
    await using both = await pair(prefix);
    await both.queue.addBulk(Array.from({ length: 600 }, (_, i) => ({ name: "e", data: { i } })));
    const events = `${prefix}:q:events`;
    const before = await direct.xlen(events);
    expect(before).toBeGreaterThan(500);
    const removed = await both.queue.trimEvents(10);
    const after = await direct.xlen(events);
    expect(removed).toBe(before - after);
    expect(removed).toBeGreaterThan(0);
    // MAXLEN ~ keeps whole stream nodes (100 entries each by default): at least 10 remain, fewer than 200.
    expect(after).toBeGreaterThanOrEqual(10);
    expect(after).toBeLessThan(200);
    expect(await both.queue.trimEvents(10)).toBe(await both.bull.trimEvents(10));
    await expect(both.queue.trimEvents(-1)).rejects.toBeInstanceOf(ValidationError);
  });
});

describe("one-type counts and Queue.remove", () => {
  it("count as BullMQ's get…Count getters do, and remove a job with its children", async () => {
    const prefix = uniquePrefix("counts");
    await using both = await pair(prefix);
    await both.queue.addBulk([
      { name: "w", data: {} },
      { name: "w", data: {} },
      { name: "d", data: {}, opts: { delay: 60_000 } },
      { name: "p", data: {}, opts: { priority: 2 } },
    ]);
    const getters = [
      "getWaitingCount",
      "getActiveCount",
      "getDelayedCount",
      "getPrioritizedCount",
      "getCompletedCount",
      "getFailedCount",
      "getWaitingChildrenCount",
    ] as const;
    for (const getter of getters) expect(await both.queue[getter](), getter).toBe(await both.bull[getter]());
    expect(await both.queue.getJobCountByTypes("waiting", "delayed")).toBe(
      await both.bull.getJobCountByTypes("waiting", "delayed"),
    );
    const [first] = await both.queue.getWaiting();
    if (!first) throw new Error("no waiting job");
    await both.queue.remove(first.id);
    expect(await both.queue.getJob(first.id)).toBeUndefined();
    expect(await both.bull.getWaitingCount()).toBe(1);
    await both.queue.remove("never-existed");
    await expect(both.queue.remove("")).rejects.toBeInstanceOf(ValidationError);
  });
});
