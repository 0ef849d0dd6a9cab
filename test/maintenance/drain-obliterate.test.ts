/**
 * `Queue.drain` and `Queue.obliterate` against bullmq@6.7.0 on identically prepared queues, what a real
 * BullMQ Queue and Worker see afterwards, the steps past 1,000 jobs, and bad input.
 */
import { Worker as BullWorker } from "bullmq";
import { describe, expect, it } from "vitest";
import {
  type ActiveJob,
  FlowProducer,
  type Queue,
  QueueStateError,
  ValidationError,
  Worker,
} from "../../core/index.ts";
import { bullConnection } from "../support/bullmq-peer.ts";
import { keysUnder, sharedRedis } from "../support/stack.ts";
import {
  direct,
  eventsSince,
  lastEventId,
  picture,
  pictures,
  type Side,
  scanQueue,
  sides,
  sleep,
  type Twins,
  twins,
  useTwins,
} from "../support/twin-queues.ts";

useTwins();

const succeed = async (job: ActiveJob) => job.id;

/** Every state a queue can hold, the same on both sides (times fixed so scores agree). */
async function fullQueue(t: Twins, side: Side, now: number): Promise<void> {
  const queue = t.queue(side);
  await queue.addBulk([
    { name: "done", data: {}, opts: { timestamp: now } },
    { name: "broken", data: {}, opts: { timestamp: now } },
  ]);
  await new Worker(
    side,
    async (job) => {
      if (job.name === "broken") throw new Error("broken");
      return job.id;
    },
    { redis: sharedRedis(), prefix: t.prefix },
  ).drain();
  await queue.add("waiting", { n: 1 }, { timestamp: now });
  await queue.add("later", {}, { timestamp: now, delay: 60_000 });
  await queue.add("urgent", {}, { timestamp: now, priority: 4 });
  await queue.add("owner", {}, { timestamp: now, deduplication: { id: "d" } });
  await t.queue(side, () => now).upsertJobScheduler("yearly", { pattern: "0 0 1 1 *" }, { data: {} });
  const flows = new FlowProducer({ redis: sharedRedis(), prefix: t.prefix });
  await flows.add({
    name: "home",
    queueName: side,
    opts: { jobId: "home", timestamp: now },
    children: [{ name: "kid", queueName: side, opts: { jobId: "kid", timestamp: now } }],
  });
  await flows.add({
    name: "away",
    queueName: `${side}-parents`,
    opts: { jobId: "away", timestamp: now },
    children: [{ name: "kid", queueName: side, opts: { jobId: "kid-away", timestamp: now } }],
  });
}

describe("Queue.drain does what BullMQ's drain does", () => {
  it("deletes waiting and prioritized jobs, then delayed ones, keeps the scheduler's iteration, writes no event", async () => {
    const t = twins();
    const now = Date.now();
    for (const side of sides) await fullQueue(t, side, now);
    const since = { b: await lastEventId(t.prefix, "b"), n: await lastEventId(t.prefix, "n") };

    await t.bull("b").drain();
    expect(await t.queue("n").drain()).toBe(5);
    let [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect(n).not.toHaveProperty("wait");
    expect(n).not.toHaveProperty("prioritized");
    expect(n).not.toHaveProperty("home");
    expect(n).not.toHaveProperty("de:d");
    expect((n.delayed as string[]).filter((_, i) => i % 2 === 0)).toEqual([
      "4",
      expect.stringMatching(/^repeat:yearly:/),
    ]);

    await t.bull("b").drain(true);
    expect(await t.queue("n").drain(true)).toBe(1);
    [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect((n.delayed as string[]).filter((_, i) => i % 2 === 0)).toEqual([
      expect.stringMatching(/^repeat:/),
    ]);
    expect(n.completed).toEqual(["1"]);
    expect(n.failed).toEqual(["2"]);
    expect(await picture(t.prefix, "n-parents", "n")).toEqual(await picture(t.prefix, "b-parents", "b"));
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual([]);
    expect(await eventsSince(t.prefix, "b", since.b)).toEqual([]);
  });

  it("leaves a real BullMQ Queue and Worker an empty queue that works on", async () => {
    const t = twins();
    const queue = t.queue("n");
    const many = Array.from({ length: 2500 }, (_, i) => ({ name: "j", data: { i } }));
    for (let i = 0; i < many.length; i += 1000) await queue.addBulk(many.slice(i, i + 1000));
    await queue.add("later", {}, { delay: 60_000 });
    await queue.add("urgent", {}, { priority: 1 });
    expect(await queue.drain(true)).toBe(2502);
    const bull = t.bull("n");
    expect(await bull.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0, prioritized: 0 });
    expect(await bull.getJob("1")).toBeUndefined();
    const seen: string[] = [];
    const worker = new BullWorker("n", async (job) => void seen.push(job.name), {
      connection: bullConnection(),
      prefix: t.prefix,
    });
    try {
      await queue.add("after", {});
      for (let i = 0; i < 200 && seen.length === 0; i++) await sleep(25);
      expect(seen).toEqual(["after"]);
    } finally {
      await worker.close();
    }
  });

  it("refuses a non-boolean argument, writing nothing", async () => {
    const t = twins();
    await t.queue("n").add("x", {});
    const before = await keysUnder(direct, t.prefix);
    await expect(t.queue("n").drain("yes" as unknown as boolean)).rejects.toMatchObject({
      name: "ValidationError",
      field: "delayed",
    });
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
  });
});

describe("Queue.obliterate does what BullMQ's obliterate does", () => {
  it("deletes every job and the queue's keys, leaving what BullMQ leaves", async () => {
    const t = twins();
    const now = Date.now();
    for (const side of sides) await fullQueue(t, side, now);
    await t.bull("b").obliterate();
    await t.queue("n").obliterate();
    // Nothing at all is left under either queue: nimbusq's replay guards (of the adds, the worker,
    // the scheduler and obliterate's own steps) live beside the queue, under `<prefix>:nq-req:`.
    expect(await scanQueue(t.prefix, "n")).toEqual([]);
    expect(await scanQueue(t.prefix, "b")).toEqual([]);
    expect(await scanQueue(t.prefix, "nq-req")).not.toEqual([]);
    expect(await picture(t.prefix, "n-parents", "n")).toEqual(await picture(t.prefix, "b-parents", "b"));
    expect(await direct.lrange(t.key("n-parents", "wait"), 0, -1)).toEqual(["away"]);

    const bull = t.bull("n");
    expect(Object.values(await bull.getJobCounts()).every((count) => count === 0)).toBe(true);
    expect(await bull.getJob("3")).toBeUndefined();
    expect(await bull.getJobSchedulersCount()).toBe(0);
    expect(await bull.isPaused()).toBe(false);
  });

  it("also deletes parents waiting for children in other queues (BullMQ leaves them)", async () => {
    const t = twins();
    const flows = new FlowProducer({ redis: sharedRedis(), prefix: t.prefix });
    await flows.add({
      name: "parent",
      queueName: "n",
      opts: { jobId: "p" },
      children: [{ name: "kid", queueName: "n-kids", opts: { jobId: "k" } }],
    });
    await t.queue("n").obliterate();
    expect(await scanQueue(t.prefix, "n")).toEqual([]);
    // The child stays; its parent key names nothing, which completing it copes with.
    expect(await direct.hget(t.key("n-kids", "k"), "parentKey")).toBe(t.key("n", "p"));
    await new Worker("n-kids", succeed, { redis: sharedRedis(), prefix: t.prefix }).drain();
    expect(await direct.zrange(t.key("n-kids", "completed"), 0, -1)).toEqual(["k"]);
  });

  it("works in steps of `count` jobs", async () => {
    const t = twins();
    const queue = t.queue("n");
    const many = Array.from({ length: 2300 }, (_, i) => ({ name: "j", data: { i } }));
    for (let i = 0; i < many.length; i += 1000) await queue.addBulk(many.slice(i, i + 1000));
    await queue.obliterate({ count: 500 });
    expect(await scanQueue(t.prefix, "n")).toEqual([]);
  });

  it("is refused while jobs are active, unless forced; the queue is paused either way", async () => {
    const t = twins();
    const queue: Queue = t.queue("n");
    await queue.addBulk([1, 2].map((i) => ({ name: "j", data: { i } })));
    await direct.rpoplpush(t.key("n", "wait"), t.key("n", "active"));
    await direct.set(t.key("n", "1:lock"), "worker-token", "PX", 60_000);
    const since = await lastEventId(t.prefix, "n");
    await expect(queue.obliterate()).rejects.toBeInstanceOf(QueueStateError);
    expect(await queue.isPaused()).toBe(true);
    expect(await eventsSince(t.prefix, "n", since)).toEqual([["event", "paused"]]);
    expect(await direct.exists(t.key("n", "1"), t.key("n", "2"))).toBe(2);
    await queue.obliterate({ force: true });
    expect(await scanQueue(t.prefix, "n")).toEqual([]);
  });

  it("refuses bad options with a ValidationError naming the field, writing nothing", async () => {
    const t = twins();
    const queue = t.queue("n");
    await queue.add("x", {});
    const before = await keysUnder(direct, t.prefix);
    for (const [opts, field] of [
      [{ count: 0 }, "count"],
      [{ count: 20_000 }, "count"],
      [{ force: "yes" }, "force"],
      [{ everything: true }, "opts.everything"],
    ] as const) {
      const call = queue.obliterate(opts as never);
      await expect(call).rejects.toBeInstanceOf(ValidationError);
      await expect(call).rejects.toMatchObject({ field });
    }
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
    expect(await queue.isPaused()).toBe(false);
  });
});
