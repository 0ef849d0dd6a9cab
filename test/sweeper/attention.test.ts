/**
 * The sweeper's attention index (issue 24, point 1) on the real sweeper loop and clock: after a
 * container's first pass an idle deployment costs one read a tick, and each thing a queue can need is
 * still noticed within one tick — a lost kick (jobs waiting, no worker), a delayed job coming due, a
 * job scheduler's next run, a lapsed lease, events to forward; a queue leaves the index once its
 * work is done; `watch: "always"` sweeps a queue every pass for writers that do not note the index
 * (BullMQ producers).
 */
import { Queue as BullQueue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue, type SweeperSettings, type SweptQueue, toRedisPort, Worker } from "../../core/index.ts";
import { loopSweeper } from "../support/loop-sweeper.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { leaseBatch } from "../support/worker-calls.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

const loop = (prefix: string, queues: SweptQueue[], extra: Partial<SweeperSettings> = {}) =>
  loopSweeper(stack.redis, prefix, queues, extra);

async function inIndex(prefix: string): Promise<string[]> {
  return await stack.direct.zrange(`${prefix}:nq:due`, 0, -1);
}

describe("the attention index", () => {
  it("after the first pass an idle tick is one read; an add is noticed at the next tick (kick, events)", async () => {
    const prefix = uniquePrefix("att");
    const sweeper = loop(prefix, [{ name: "mail", workerFunction: "mail-worker" }]);
    await sweeper.tick();
    stack.rest.resetStats();
    const idle = await sweeper.tick();
    expect({ passes: idle.passes, commands: stack.rest.stats().byCommand }).toEqual({
      passes: 1,
      commands: { zrange: 1 },
    });
    // A job added with no worker running (its kick lost): the next tick starts one and forwards its events.
    await new Queue("mail", { redis: stack.redis, prefix }).add("send", {});
    await sweeper.tick();
    expect(sweeper.started).toEqual(["mail"]);
    expect(sweeper.published.map((e) => e.event.fields.event)).toEqual(["added", "waiting"]);
    // Done: the worker drains it; the tick after forwards its events, and the queue leaves the index.
    await new Worker("mail", async () => "sent", { redis: stack.redis, prefix }).drain();
    await sweeper.tick();
    expect(sweeper.published.map((e) => e.event.fields.event)).toContain("completed");
    expect(await inIndex(prefix)).toEqual([]);
  });

  it("a delayed job added between ticks is promoted within a second of its due time", async () => {
    const prefix = uniquePrefix("att");
    const sweeper = loop(prefix, [{ name: "later" }]);
    await sweeper.tick();
    const job = await new Queue("later", { redis: stack.redis, prefix }).add("x", {}, { delay: 1500 });
    const result = await sweeper.tick();
    expect(result.promoted).toBe(1);
    const entries = await stack.direct.xrange(`${prefix}:later:events`, "-", "+");
    const promotion = entries.find(([, f]) => f[1] === "waiting" && f.includes("delayed"));
    expect(Number(promotion?.[0].split("-")[0]) - (job.timestamp + 1500)).toBeLessThan(1000);
  });

  it("a job scheduler's next run, made by the worker that ran the last, is promoted on time", async () => {
    const prefix = uniquePrefix("att");
    const sweeper = loop(prefix, [{ name: "cron" }]);
    await sweeper.tick();
    const queue = new Queue("cron", { redis: stack.redis, prefix });
    await queue.upsertJobScheduler("every-1500", { every: 1500 });
    // The worker runs the first iteration and makes the next one, delayed until the next run.
    expect((await new Worker("cron", async () => 1, { redis: stack.redis, prefix }).drain()).completed).toBe(
      1,
    );
    const [next] = await queue.getDelayed();
    const due = (next?.timestamp ?? 0) + (next?.delay ?? 0);
    expect((await sweeper.tick()).promoted).toBe(1);
    const entries = await stack.direct.xrange(`${prefix}:cron:events`, "-", "+");
    const promotion = entries.find(([, f]) => f[1] === "waiting" && f.includes(next?.id as string));
    expect(Number(promotion?.[0].split("-")[0]) - due).toBeLessThan(1000);
  });

  it("a lapsed lease is recovered within a tick (BullMQ's two-step stalled check)", async () => {
    const prefix = uniquePrefix("att");
    const sweeper = loop(prefix, [{ name: "held" }]);
    await sweeper.tick();
    await new Queue("held", { redis: stack.redis, prefix }).add("x", {});
    // A worker leases it for 1 s and dies.
    const context = { port: toRedisPort(stack.redis), prefix, queueName: "held", clock: Date.now };
    const leased = await leaseBatch(context, {
      token: "dead-worker",
      count: 1,
      leaseMs: 1000,
      limiterMax: 0,
      limiterDuration: 0,
      workerName: "",
    });
    expect(leased.jobs).toHaveLength(1);
    const result = await sweeper.tick();
    expect(result.stalled).toBe(1);
    expect(await stack.direct.lrange(`${prefix}:held:wait`, 0, -1)).toEqual(["1"]);
  });

  it("watch: always sweeps a queue BullMQ producers add to; the index alone would not see them", async () => {
    const prefix = uniquePrefix("att");
    const sweeper = loop(prefix, [
      { name: "watched", workerFunction: "w", watch: "always" },
      { name: "indexed", workerFunction: "i" },
    ]);
    await sweeper.tick();
    const connection = { host: stack.redisServer.host, port: stack.redisServer.port };
    for (const name of ["watched", "indexed"]) {
      const bull = new BullQueue(name, { connection, prefix });
      await bull.add("from-bullmq", {});
      await bull.close();
    }
    await sweeper.tick();
    expect(sweeper.started).toEqual(["watched"]);
  });
});
