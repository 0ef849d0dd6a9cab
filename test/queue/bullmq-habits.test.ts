/**
 * BullMQ habits a migrator brings (issue 25): `queue.on(…)` with BullMQ's local Queue events,
 * `Job.create` / `Job.fromId`, `removeRateLimitKey`, and FlowProducer.add's `queuesOptions`.
 */
import { describe, expect, it } from "vitest";
import { FlowProducer, Job, Queue } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

const queueIn = (prefix: string, name = "habits") => new Queue(name, { redis: sharedRedis(), prefix });

describe("queue.on", () => {
  it("emits waiting, removed, paused, resumed and cleaned, as BullMQ's Queue does", async () => {
    const queue = queueIn(uniquePrefix("habits"));
    const heard: string[] = [];
    queue.on("waiting", (job) => heard.push(`waiting ${job.id}`));
    queue.on("removed", (id) => heard.push(`removed ${id}`));
    queue.on("paused", () => heard.push("paused"));
    queue.on("resumed", () => heard.push("resumed"));
    queue.on("cleaned", (ids, type) => heard.push(`cleaned ${ids.length} ${type}`));
    const first = await queue.add("a", 1);
    await queue.add("b", 2);
    await queue.remove(first.id);
    await queue.pause();
    await queue.resume();
    await queue.clean(0, 0, "wait");
    expect(heard).toEqual(["waiting 1", "waiting 2", "removed 1", "paused", "resumed", "cleaned 1 wait"]);
  });

  it("reports a listener that throws as an error event and goes on", async () => {
    const queue = queueIn(uniquePrefix("habits"));
    const errors: string[] = [];
    queue.on("waiting", () => {
      throw new Error("listener broke");
    });
    queue.on("error", (error) => errors.push(error.message));
    const job = await queue.add("a", 1);
    expect(await queue.getJobState(job.id)).toBe("waiting");
    expect(errors).toEqual(["listener broke"]);
  });
});

describe("Job.create and Job.fromId", () => {
  it("add through the queue and read back, as BullMQ's statics", async () => {
    const queue = queueIn(uniquePrefix("habits"));
    const made = await Job.create(queue, "welcome", { to: "a@example.com" }, { attempts: 2 });
    const read = await Job.fromId(queue, made.id);
    expect(read?.data).toEqual({ to: "a@example.com" });
    expect(read?.opts.attempts).toBe(2);
    expect(await Job.fromId(queue, "nope")).toBeUndefined();
  });
});

describe("removeRateLimitKey", () => {
  it("ends a manual rate limit at once and says whether there was one", async () => {
    const queue = queueIn(uniquePrefix("habits"));
    await queue.rateLimit(60_000);
    expect(await queue.getRateLimitTtl()).toBeGreaterThan(50_000);
    expect(await queue.removeRateLimitKey()).toBe(1);
    expect(await queue.getRateLimitTtl()).toBe(-2);
    expect(await queue.removeRateLimitKey()).toBe(0);
  });
});

describe("FlowProducer.add's queuesOptions", () => {
  it("gives each queue's nodes its default options under their own", async () => {
    const prefix = uniquePrefix("habits");
    const flow = new FlowProducer({ redis: sharedRedis(), prefix });
    const tree = await flow.add(
      {
        name: "parent",
        queueName: "reports",
        opts: { priority: 3 },
        children: [{ name: "child", queueName: "parts", data: 1, opts: { attempts: 5 } }],
      },
      {
        queuesOptions: {
          reports: { defaultJobOptions: { attempts: 4, priority: 9 } },
          parts: { defaultJobOptions: { attempts: 2, backoff: 1000 } },
        },
      },
    );
    const parent = await queueIn(prefix, "reports").getJob(tree.job.id);
    const child = await queueIn(prefix, "parts").getJob(tree.children?.[0]?.job.id as string);
    expect([parent?.opts.attempts, parent?.priority]).toEqual([4, 3]);
    expect([child?.opts.attempts, child?.opts.backoff]).toEqual([5, { type: "fixed", delay: 1000 }]);
  });

  it("refuses what a flow cannot use, naming it", async () => {
    const flow = new FlowProducer({ redis: sharedRedis(), prefix: uniquePrefix("habits") });
    const node = { name: "n", queueName: "q" };
    await expect(flow.add(node, { queuesOptions: { q: { prefix: "x" } as never } })).rejects.toThrow(
      /opts\.queuesOptions\.q\.prefix must be left out \(a flow's jobs take only defaultJobOptions/,
    );
    await expect(flow.add(node, { queueOptions: {} } as never)).rejects.toThrow(/opts\.queueOptions/);
  });
});
