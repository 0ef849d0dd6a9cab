/**
 * Grouped jobs through the paths that put a job back: a worker that dies holding grouped jobs (the
 * stalled check returns them to the front of their groups and frees the slots), the sweeper's
 * promotion of grouped delayed jobs, and a real BullMQ worker beside them that never takes one.
 */
import { describe, expect, it } from "vitest";
import { createSweeper, Queue, Worker } from "../../core/index.ts";
import type { QueueContext } from "../../core/redis/queue-context.ts";
import { interopPeers, sleep } from "../support/bullmq-peer.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";
import { leaseBatch } from "../support/worker-calls.ts";

const direct = directConnectionForFile();
const interop = interopPeers();

describe("grouped jobs put back", () => {
  it("a worker that dies holding grouped jobs: they return to their groups' front, slots freed, and run once", async () => {
    const prefix = uniquePrefix("grp");
    const redis = sharedRedis();
    const queue = new Queue("q", { redis, prefix });
    await queue.addBulk(
      ["a", "b", "a", "b"].map((id, n) => ({ name: `${id}${n}`, data: {}, opts: { group: { id } } })),
    );
    const survivor = new Worker("q", async (job) => job.name, {
      redis,
      prefix,
      batchSize: 10,
      stalledInterval: 50,
    });
    const context: QueueContext = { port: survivor.context.port, prefix, queueName: "q", clock: Date.now };
    const dead = await leaseBatch(context, {
      token: "dead:1",
      count: 2,
      leaseMs: 150,
      limiterMax: 0,
      limiterDuration: 0,
      workerName: "",
      groupConcurrency: 1,
    });
    expect(dead.jobs.map((job) => job.name)).toEqual(["a0", "b1"]);
    expect(await direct.hgetall(`${prefix}:q:nq:grun`)).toEqual({ a: "1", b: "1" });
    // Full at group.concurrency 1: both groups left the ring.
    expect(await direct.zcard(`${prefix}:q:nq:groups`)).toBe(0);
    expect(await survivor.recoverStalled()).toEqual([]);
    await sleep(200);
    expect((await survivor.recoverStalled()).sort()).toEqual(["1", "2"]);
    expect(await direct.exists(`${prefix}:q:nq:grun`)).toBe(0);
    expect(await direct.zrange(`${prefix}:q:nq:g:a`, 0, -1)).toEqual(["1", "3"]);
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(0);
    const ran: string[] = [];
    const worker = new Worker("q", async (job) => ran.push(job.name), {
      redis,
      prefix,
      batchSize: 10,
      group: { concurrency: 1 },
    });
    for (let i = 0; i < 4 && ran.length < 4; i++) await worker.drain();
    expect(ran.sort()).toEqual(["a0", "a2", "b1", "b3"]);
    expect(await direct.hget(`${prefix}:q:1`, "stc")).toBe("1");
  });

  it("the sweeper promotes a grouped delayed job into its group and reports its due time", async () => {
    const prefix = uniquePrefix("grp");
    const redis = sharedRedis();
    const queue = new Queue("q", { redis, prefix });
    const job = await queue.add("later", {}, { group: { id: "t" }, delay: 300 });
    const sweeper = createSweeper(
      { queues: ["q"], prefix, tickMs: 1500, marginMs: 200, minPassGapMs: 50 },
      {
        connect: () => redis,
        startWorkers: async () => {},
      },
    );
    const result = await sweeper.run({ token: crypto.randomUUID(), remainingMs: 1200 });
    expect(result.promoted).toBe(1);
    expect(await direct.zrange(`${prefix}:q:nq:g:t`, 0, -1)).toEqual([job.id]);
    expect(await direct.zcard(`${prefix}:q:nq:gdelayed`)).toBe(0);
    expect(await direct.hget(`${prefix}:q:${job.id}`, "delay")).toBe("0");
    expect(await queue.getJobState(job.id)).toBe("waiting");
  });

  it("a real BullMQ worker on the queue takes the ungrouped jobs and never a grouped one", async () => {
    const peers = interop("grp");
    const queue = peers.queue("q");
    await queue.addBulk([
      { name: "grouped", data: {}, opts: { group: { id: "g" } } },
      { name: "plain", data: {} },
      { name: "grouped-later", data: {}, opts: { group: { id: "g" }, delay: 100 } },
    ]);
    const bull = peers.worker("q");
    await bull.started(1);
    await sleep(400);
    expect(bull.seen.map((job) => job.name)).toEqual(["plain"]);
    expect(await queue.getGroupJobsCount("g")).toBe(1);
    const ran: string[] = [];
    const worker = new Worker("q", async (job) => ran.push(job.name), {
      redis: peers.redis,
      prefix: peers.prefix,
    });
    await worker.drain();
    expect(ran).toEqual(["grouped", "grouped-later"]);
  });
});
