/**
 * `Queue.retryJobs`, `Queue.promoteJobs` and `Job.promote` against bullmq@6.7.0 on identically prepared
 * queues, a real BullMQ Worker running what they made ready, steps, replays and bad input.
 */
import { Worker as BullWorker } from "bullmq";
import { describe, expect, it } from "vitest";
import {
  FlowProducer,
  JobNotFoundError,
  JobNotInStateError,
  Queue,
  ValidationError,
  Worker,
} from "../../core/index.ts";
import { bullConnection } from "../support/bullmq-peer.ts";
import { keysUnder, sharedRedis, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import {
  direct,
  eventsSince,
  lastEventId,
  picture,
  pictures,
  sides,
  sleep,
  twins,
  useTwins,
} from "../support/twin-queues.ts";

useTwins();

describe("Queue.retryJobs does what BullMQ's retryJobs does", () => {
  it("puts finished jobs back at the head of wait (priority aside), children pending again, in steps", async () => {
    const t = twins();
    const now = Date.now();
    const flows = new FlowProducer({ redis: sharedRedis(), prefix: t.prefix });
    for (const side of sides) {
      await flows.add({
        name: "parent",
        queueName: `${side}-parents`,
        opts: { jobId: "mom" },
        children: [
          { name: "bad", queueName: side, opts: { jobId: "kid", failParentOnFailure: true, timestamp: now } },
        ],
      });
      await t.queue(side).addBulk([
        { name: "bad", data: {}, opts: { timestamp: now, jobId: "a" } },
        { name: "bad", data: {}, opts: { timestamp: now, jobId: "b", priority: 3 } },
        { name: "good", data: {}, opts: { timestamp: now, jobId: "c" } },
        { name: "bad", data: {}, opts: { timestamp: now, jobId: "d" } },
      ]);
      await new Worker(
        side,
        async (job) => {
          if (job.name === "bad") throw new Error("bad");
          return "ok";
        },
        { redis: sharedRedis(), prefix: t.prefix, clock: () => now - 1000 },
      ).drain();
      // The last failure is more recent than the retry's timestamp.
      await direct.zadd(t.key(side, "failed"), now + 60_000, "d");
    }
    const since = { b: await lastEventId(t.prefix, "b"), n: await lastEventId(t.prefix, "n") };
    await t.bull("b").retryJobs({ count: 2, timestamp: now });
    expect(await t.queue("n").retryJobs({ count: 2, timestamp: now })).toBe(3);
    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
    // Two steps of two, each LPUSHed in finish order (the same finishedOn: by id).
    expect([...(n.wait as string[])].sort()).toEqual(["a", "b", "kid"]);
    expect(n.failed).toEqual(["d"]);
    expect(n.kid).not.toHaveProperty("failedReason");
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual(await eventsSince(t.prefix, "b", since.b));
    expect(await picture(t.prefix, "n-parents", "n")).toEqual(await picture(t.prefix, "b-parents", "b"));
    expect(await direct.smembers(t.key("n-parents", "mom:dependencies"))).toEqual([t.key("n", "kid")]);

    await t.bull("b").retryJobs({ state: "completed" });
    expect(await t.queue("n").retryJobs({ state: "completed" })).toBe(1);
    const [b2, n2] = await pictures(t);
    expect(n2).toEqual(b2);
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual(await eventsSince(t.prefix, "b", since.b));
  });

  it("stops after `limit` jobs (nimbusq's option) and moves thousands in steps", async () => {
    const t = twins();
    const queue = t.queue("n");
    const many = Array.from({ length: 2300 }, (_, i) => ({ name: "j", data: { i } }));
    for (let i = 0; i < many.length; i += 1000) await queue.addBulk(many.slice(i, i + 1000));
    await new Worker(
      "n",
      async () => {
        throw new Error("no");
      },
      { redis: sharedRedis(), prefix: t.prefix, batchSize: 500 },
    ).drain();
    expect(await queue.retryJobs({ limit: 300 })).toBe(300);
    expect(await direct.llen(t.key("n", "wait"))).toBe(300);
    expect(await queue.retryJobs()).toBe(2000);
    expect(await queue.getJobCounts("failed", "wait")).toEqual({ failed: 0, wait: 2300 });
  });
});

describe("Queue.promoteJobs does what BullMQ's promoteJobs does", () => {
  it("moves every delayed job to wait, leaving their stored delay, in steps of count", async () => {
    const t = twins();
    const now = Date.now();
    for (const side of sides) {
      const queue = t.queue(side);
      await queue.addBulk([
        { name: "a", data: {}, opts: { timestamp: now, delay: 5000 } },
        { name: "b", data: {}, opts: { timestamp: now, delay: 1000, priority: 2 } },
        { name: "c", data: {}, opts: { timestamp: now, delay: 3000 } },
      ]);
      await queue.add("ready", {}, { timestamp: now });
      await queue.pause();
    }
    const since = { b: await lastEventId(t.prefix, "b"), n: await lastEventId(t.prefix, "n") };
    await t.bull("b").promoteJobs({ count: 2 });
    expect(await t.queue("n").promoteJobs({ count: 2 })).toBe(3);
    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect(n.wait).toEqual(["1", "3", "2", "4"]);
    expect(n).not.toHaveProperty("marker");
    expect((n["1"] as Record<string, string>).delay).toBe("5000");
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual(await eventsSince(t.prefix, "b", since.b));
  });
});

describe("Job.promote does what BullMQ's job.promote does", () => {
  it("makes a delayed job ready now, in wait or prioritized, with its delay reset", async () => {
    const t = twins();
    const now = Date.now();
    for (const side of sides) {
      await t.queue(side).addBulk([
        { name: "plain", data: {}, opts: { timestamp: now, delay: 60_000 } },
        { name: "urgent", data: {}, opts: { timestamp: now, delay: 60_000, priority: 5 } },
        { name: "stays", data: {}, opts: { timestamp: now, delay: 90_000 } },
      ]);
    }
    const since = { b: await lastEventId(t.prefix, "b"), n: await lastEventId(t.prefix, "n") };
    for (const id of ["2", "1"]) {
      await (await t.bull("b").getJob(id))?.promote();
      const job = await t.queue("n").getJob(id);
      await job?.promote();
      expect(job?.delay).toBe(0);
    }
    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect(n.wait).toEqual(["1"]);
    expect((n.prioritized as string[])[0]).toBe("2");
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual(await eventsSince(t.prefix, "b", since.b));
  });

  it("refuses a job that is not delayed or not there, and a real BullMQ Worker runs a promoted job at once", async () => {
    const t = twins();
    const queue = t.queue("n");
    const ready = await queue.add("ready", {});
    await expect(ready.promote()).rejects.toBeInstanceOf(JobNotInStateError);
    await expect(ready.promote()).rejects.toThrow(/job "1" in queue "n" is not delayed/);
    const later = await queue.add("later", {}, { delay: 3_600_000 });
    await direct.multi().del(t.key("n", "1")).lrem(t.key("n", "wait"), 0, "1").exec();
    await expect(ready.promote()).rejects.toBeInstanceOf(JobNotFoundError);
    const seen: string[] = [];
    const worker = new BullWorker("n", async (job) => void seen.push(job.name), {
      connection: bullConnection(),
      prefix: t.prefix,
    });
    try {
      await worker.waitUntilReady();
      await sleep(500);
      await later.promote();
      for (let i = 0; i < 200 && seen.length === 0; i++) await sleep(25);
      expect(seen).toEqual(["later"]);
    } finally {
      await worker.close();
    }
  });

  it("promotes once when the answer is lost and the call repeated", async () => {
    const stack = await startPrivateStack();
    try {
      const prefix = uniquePrefix();
      const queue = new Queue("n", { redis: stack.redis, prefix });
      const job = await queue.add("later", {}, { delay: 60_000 });
      stack.rest.setFault({ kind: "drop-after", times: 1, command: "evalsha" });
      await job.promote();
      expect(await stack.direct.lrange(`${prefix}:n:wait`, 0, -1)).toEqual(["1"]);
      const events = await stack.direct.xrange(`${prefix}:n:events`, "-", "+");
      expect(events.filter(([, f]) => f[5] === "delayed" && f[1] === "waiting")).toHaveLength(1);
    } finally {
      await stack.stop();
    }
  });
});

describe("retryJobs and promoteJobs arguments", () => {
  it("refuses bad options with a ValidationError naming the field, writing nothing", async () => {
    const t = twins();
    const queue = t.queue("n");
    await queue.add("x", {}, { delay: 1000 });
    const before = await keysUnder(direct, t.prefix);
    const bad: [() => Promise<unknown>, string][] = [
      [() => queue.retryJobs({ state: "active" as "failed" }), "state"],
      [() => queue.retryJobs({ count: 0 }), "count"],
      [() => queue.retryJobs({ timestamp: -5 }), "timestamp"],
      [() => queue.retryJobs({ limit: 0 }), "limit"],
      [() => queue.promoteJobs({ count: 1.5 }), "count"],
      [() => queue.promoteJobs({ what: 1 } as never), "opts.what"],
    ];
    for (const [call, field] of bad) {
      const promise = call();
      await expect(promise).rejects.toBeInstanceOf(ValidationError);
      await expect(promise).rejects.toMatchObject({ field });
    }
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
  });
});
