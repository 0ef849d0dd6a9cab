/**
 * Grouped jobs at the edges a review found: a grouped parent that waits for a new child frees its
 * slot, a grouped job removed by BullMQ behind nimbusq's back frees its slot, a dead letter redriven
 * goes back to its group, obliterate leaves no group key behind.
 */
import { Queue as BullQueue } from "bullmq";
import { describe, expect, it } from "vitest";
import { Queue, WaitingChildrenError, Worker } from "../../core/index.ts";
import { bullConnection, directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function setup() {
  const prefix = uniquePrefix("gedge");
  const redis = sharedRedis();
  return { prefix, redis, queue: new Queue("q", { redis, prefix }), key: (s: string) => `${prefix}:q:${s}` };
}

describe("grouped jobs at the edges", () => {
  it("a grouped parent parked for a new child frees its slot: its group's next job runs meanwhile", async () => {
    const { prefix, redis, queue, key } = setup();
    await queue.add("parent", {}, { group: { id: "g" }, jobId: "p1" });
    await queue.add("next", {}, { group: { id: "g" } });
    const ran: string[] = [];
    const worker = new Worker(
      "q",
      async (job) => {
        ran.push(job.name);
        if (job.name === "parent" && ran.filter((name) => name === "parent").length === 1) {
          await queue.add("child", {}, { parent: { id: job.id, queue: queue.qualifiedName } });
          if (await job.moveToWaitingChildren()) throw new WaitingChildrenError();
        }
      },
      { redis, prefix, batchSize: 1, concurrency: 1, group: { concurrency: 1 } },
    );
    for (let i = 0; i < 5 && ran.filter((name) => name === "parent").length < 2; i++) await worker.drain();
    expect(ran).toContain("next");
    expect(ran.filter((name) => name === "parent")).toHaveLength(2);
    expect(await direct.exists(key("nq:grun"))).toBe(0);
  });

  it("a grouped job BullMQ removes while it waits in its group: the lease drops it and frees its slot", async () => {
    const { prefix, redis, queue, key } = setup();
    const [gone] = await queue.addBulk([
      { name: "gone", data: {}, opts: { group: { id: "g" } } },
      { name: "kept", data: {}, opts: { group: { id: "g" } } },
    ]);
    const bull = new BullQueue("q", { connection: bullConnection(), prefix });
    try {
      await (await bull.getJob(gone?.id as string))?.remove();
    } finally {
      await bull.close();
    }
    const ran: string[] = [];
    await new Worker("q", async (job) => ran.push(job.name), {
      redis,
      prefix,
      group: { concurrency: 1 },
    }).drain();
    expect(ran).toEqual(["kept"]);
    expect(await direct.exists(key("nq:grun"))).toBe(0);
    expect(await direct.llen(key("active"))).toBe(0);
  });

  it("a grouped job's dead letter, redriven, goes back to its group", async () => {
    const { prefix, redis, queue, key } = setup();
    await queue.add("doomed", {}, { group: { id: "g" }, deadLetter: { queue: "q-dlq" } });
    await new Worker(
      "q",
      async () => {
        throw new Error("no");
      },
      { redis, prefix },
    ).drain();
    expect(await queue.redrive({ from: "q-dlq" })).toMatchObject({ count: 1 });
    expect(await direct.zcard(key("nq:g:g"))).toBe(1);
    expect(await direct.llen(key("wait"))).toBe(0);
  });

  it("obliterate deletes grouped jobs (ready, delayed, paused groups) and every group key", async () => {
    const { prefix, queue } = setup();
    await queue.addBulk([
      { name: "a", data: {}, opts: { group: { id: "a" } } },
      { name: "b", data: {}, opts: { group: { id: "b" }, delay: 60_000 } },
      { name: "c", data: {}, opts: { group: { id: "c" } } },
      { name: "plain", data: {} },
    ]);
    await queue.pauseGroup("c");
    await queue.pause();
    await queue.obliterate();
    expect(await direct.keys(`${prefix}:q:*`)).toEqual([]);
  });
});
