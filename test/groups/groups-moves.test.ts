/**
 * The moves of one grouped job from outside the worker: remove, cancel, retry (one and in bulk),
 * promote and changeDelay keep it in nimbusq's group structures, never in BullMQ's wait or delayed.
 */
import { describe, expect, it } from "vitest";
import { FlowProducer, Queue, Worker } from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function setup() {
  const prefix = uniquePrefix("gmv");
  const redis = sharedRedis();
  const queue = new Queue("q", { redis, prefix });
  const key = (suffix: string) => `${prefix}:q:${suffix}`;
  return { prefix, redis, queue, key };
}

const group = { group: { id: "g" } };

describe("grouped job moves", () => {
  it("remove and cancel take a waiting or delayed grouped job out of its group", async () => {
    const { queue, key } = setup();
    const [a, b] = await queue.addBulk([
      { name: "a", data: {}, opts: group },
      { name: "b", data: {}, opts: group },
    ]);
    const later = await queue.add("later", {}, { ...group, delay: 60_000 });
    await queue.remove(a?.id as string);
    expect(await direct.zrange(key("nq:g:g"), 0, -1)).toEqual([b?.id]);
    expect(await queue.cancelJob(b?.id as string, "no longer needed")).toMatchObject({
      outcome: "cancelled",
    });
    expect(await direct.exists(key("nq:g:g"))).toBe(0);
    expect(await queue.getJobState(b?.id as string)).toBe("failed");
    await queue.remove(later.id);
    expect(await direct.exists(key("nq:gdelayed"))).toBe(0);
  });

  it("retry (one, and retryJobs) puts a failed grouped job back in its group; promote and changeDelay keep to nq:gdelayed", async () => {
    const { prefix, redis, queue, key } = setup();
    await queue.addBulk([
      { name: "x", data: {}, opts: group },
      { name: "y", data: {}, opts: group },
    ]);
    const worker = new Worker(
      "q",
      async () => {
        throw new Error("nope");
      },
      { redis, prefix },
    );
    expect(await worker.drain()).toMatchObject({ failed: 2 });
    const [first] = await queue.getFailed();
    await first?.retry();
    expect(await direct.zcard(key("nq:g:g"))).toBe(1);
    await queue.retryJobs();
    expect(await direct.zcard(key("nq:g:g"))).toBe(2);
    expect(await direct.llen(key("wait"))).toBe(0);
    const later = await queue.add("later", {}, { ...group, delay: 60_000 });
    await later.changeDelay(120_000);
    expect(await direct.zcard(key("delayed"))).toBe(0);
    const score = Number(await direct.zscore(key("nq:gdelayed"), later.id));
    expect(Math.floor(score / 4096)).toBeGreaterThan(Date.now() + 100_000);
    await later.promote();
    expect(await direct.zcard(key("nq:gdelayed"))).toBe(0);
    expect(await direct.zcard(key("nq:g:g"))).toBe(3);
    expect(await direct.llen(key("wait"))).toBe(0);
    // changePriority places a grouped job again in its group.
    const [head] = await queue.getGroupJobs("g", 0, 0);
    await head?.changePriority({ priority: 9 });
    expect((await direct.zrange(key("nq:g:g"), -1, -1))[0]).toBe(head?.id);
    // promoteJobs: BullMQ's delayed jobs to wait, the grouped ones to their groups.
    await queue.addBulk([
      { name: "d1", data: {}, opts: { ...group, delay: 60_000 } },
      { name: "d2", data: {}, opts: { delay: 60_000 } },
    ]);
    expect(await queue.promoteJobs()).toBe(2);
    expect(await direct.zcard(key("nq:g:g"))).toBe(4);
    expect(await direct.llen(key("wait"))).toBe(1);
  });

  it("a job scheduler whose template is grouped makes grouped iterations", async () => {
    const { queue, key } = setup();
    await queue.upsertJobScheduler("tick", { every: 60_000 }, { name: "tick", opts: { group: { id: "g" } } });
    const [iteration] = await direct.zrange(key("nq:g:g"), 0, -1);
    expect(iteration).toMatch(/^repeat:tick:/);
    expect(await direct.llen(key("wait"))).toBe(0);
    expect(await direct.hget(key(iteration as string), "gid")).toBe("g");
  });

  it("a grouped flow parent waits for its children, then runs in its group (through the group inbox)", async () => {
    const { prefix, redis, key } = setup();
    const flow = new FlowProducer({ redis, prefix });
    const tree = await flow.add({
      name: "parent",
      queueName: "q",
      opts: { group: { id: "p" } },
      children: [
        { name: "child", queueName: "q", data: { n: 1 }, opts: { group: { id: "c" } } },
        { name: "child", queueName: "q", data: { n: 2 } },
      ],
    });
    const ran: string[] = [];
    const worker = new Worker(
      "q",
      async (job) => {
        ran.push(job.name);
        return job.name;
      },
      { redis, prefix, batchSize: 1, concurrency: 1 },
    );
    for (let i = 0; i < 4 && !ran.includes("parent"); i++) await worker.drain();
    expect(ran.filter((name) => name === "parent")).toHaveLength(1);
    expect(await tree.job.getState()).toBe("completed");
    expect(await direct.exists(key("nq:ginbox"))).toBe(0);
    expect(await direct.llen(key("wait"))).toBe(0);
  });

  it("a grouped parent with a delay goes to nq:gdelayed once its children are done", async () => {
    const { prefix, redis, key } = setup();
    const tree = await new FlowProducer({ redis, prefix }).add({
      name: "parent",
      queueName: "q",
      opts: { group: { id: "p" }, delay: 60_000 },
      children: [{ name: "child", queueName: "q" }],
    });
    await new Worker("q", async () => "ok", { redis, prefix }).drain();
    expect(await direct.zrange(key("nq:gdelayed"), 0, -1)).toEqual([tree.job.id]);
    expect(await tree.job.getState()).toBe("delayed");
  });

  it("a child failing with continueParentOnFailure moves its grouped parent on at once, into its group", async () => {
    const { prefix, redis, key } = setup();
    const tree = await new FlowProducer({ redis, prefix }).add({
      name: "parent",
      queueName: "q",
      opts: { group: { id: "p" } },
      children: [{ name: "child", queueName: "q", opts: { continueParentOnFailure: true } }],
    });
    const ran: string[] = [];
    const worker = new Worker(
      "q",
      async (job) => {
        ran.push(job.name);
        if (job.name === "child") throw new Error("child fails, parent continues");
      },
      { redis, prefix, batchSize: 1, concurrency: 1 },
    );
    for (let i = 0; i < 4 && !ran.includes("parent"); i++) await worker.drain();
    expect(ran).toEqual(["child", "parent"]);
    expect(await tree.job.getState()).toBe("completed");
    expect(await direct.exists(key("nq:ginbox"))).toBe(0);
  });
});
