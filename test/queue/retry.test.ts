/**
 * `Job.retry` against the judge: two queues get the same history (added and finished by nimbusq), then
 * one is retried by the real bullmq@6.7.0 `job.retry` and the other by nimbusq's. Every structure the
 * retry touches must end up the same.
 */
import { FlowProducer as BullFlowProducer, Queue as BullQueue } from "bullmq";
import { describe, expect, it } from "vitest";
import {
  type ActiveJob,
  JobNotFoundError,
  JobNotInStateError,
  type JobsOptions,
  Queue,
  Worker,
} from "../../core/index.ts";
import {
  directConnectionForFile,
  keysUnder,
  sharedConnectionOptions,
  sharedRedis,
  startPrivateStack,
  uniquePrefix,
} from "../support/stack.ts";

const direct = directConnectionForFile();

async function must<T>(value: Promise<T | undefined>): Promise<T> {
  const found = await value;
  if (found === undefined) throw new Error("expected a value");
  return found;
}

const fail = async (): Promise<never> => {
  throw new Error("boom");
};
const succeed = async (job: ActiveJob) => ({ done: job.id });

/** Adds the same jobs to both queues and finishes them with nimbusq's worker. */
async function sameHistory(
  prefix: string,
  jobs: { name: string; opts?: JobsOptions }[],
  processor: (job: ActiveJob) => Promise<unknown>,
): Promise<void> {
  for (const name of ["b", "n"]) {
    const queue = new Queue(name, { redis: sharedRedis(), prefix });
    await queue.addBulk(jobs.map((job) => ({ ...job, data: { n: 1 } })));
    await new Worker(name, processor, { redis: sharedRedis(), prefix }).drain();
  }
}

/** Everything a retry touches, with the per-queue parts (timestamps, stream ids) left out. */
async function snapshot(prefix: string, queue: string, id: string) {
  const p = `${prefix}:${queue}:`;
  const { timestamp: _t, ...stored } = await direct.hgetall(`${p}${id}`);
  // A child names its parent's queue, which is per side.
  const hash = Object.fromEntries(
    Object.entries(stored).map(([field, value]) => [field, value.replaceAll(`${queue}-parents`, "parents")]),
  );
  const events = await direct.xrange(`${p}events`, "-", "+");
  return {
    hash,
    wait: await direct.lrange(`${p}wait`, 0, -1),
    prioritized: await direct.zrange(`${p}prioritized`, 0, -1, "WITHSCORES"),
    marker: await direct.zrange(`${p}marker`, 0, -1, "WITHSCORES"),
    failed: await direct.zrange(`${p}failed`, 0, -1),
    completed: await direct.zrange(`${p}completed`, 0, -1),
    lastEvent: events.at(-1)?.[1],
  };
}

async function retryBoth(prefix: string, id: string, state: "failed" | "completed", reset = false) {
  const bull = new BullQueue("b", { connection: sharedConnectionOptions(), prefix });
  try {
    const opts = { resetAttemptsMade: reset, resetAttemptsStarted: reset };
    await (await bull.getJob(id))?.retry(state, opts);
    const job = await new Queue("n", { redis: sharedRedis(), prefix }).getJob(id);
    await job?.retry(state, opts);
    expect(job?.finishedOn).toBeUndefined();
  } finally {
    await bull.close();
  }
  const [theirs, ours] = [await snapshot(prefix, "b", id), await snapshot(prefix, "n", id)];
  expect(ours).toEqual(theirs);
  return ours;
}

describe("Job.retry does what BullMQ's job.retry does", () => {
  it("puts a failed job at the back of wait, keeping its attempts and stack", async () => {
    const prefix = uniquePrefix();
    await sameHistory(prefix, [{ name: "a" }, { name: "b" }], fail);
    const after = await retryBoth(prefix, "2", "failed");
    expect(after.wait).toEqual(["2"]);
    expect(after.failed).toEqual(["1"]);
    expect(after.hash).toMatchObject({ atm: "1", ats: "1" });
    expect(after.hash).not.toHaveProperty("failedReason");
    expect(after.hash).not.toHaveProperty("finishedOn");
    expect(after.hash).not.toHaveProperty("processedOn");
    expect(after.lastEvent).toEqual(["event", "waiting", "jobId", "2", "prev", "failed"]);
  });

  it("resets the attempt counters when asked, and retries completed jobs by priority and lifo", async () => {
    const prefix = uniquePrefix();
    await sameHistory(
      prefix,
      [
        { name: "plain" },
        { name: "urgent", opts: { priority: 7 } },
        { name: "last-in", opts: { lifo: true } },
      ],
      succeed,
    );
    const urgent = await retryBoth(prefix, "2", "completed", true);
    expect(urgent.prioritized[0]).toBe("2");
    expect(urgent.hash).not.toHaveProperty("returnvalue");
    expect(urgent.hash).not.toHaveProperty("atm");
    await retryBoth(prefix, "1", "completed");
    const lifo = await retryBoth(prefix, "3", "completed");
    expect(lifo.wait).toEqual(["1", "3"]);
    expect(lifo.completed).toEqual([]);
  });

  it("makes a retried child pending again for its parent", async () => {
    const prefix = uniquePrefix();
    const flows = new BullFlowProducer({ connection: sharedConnectionOptions(), prefix });
    try {
      for (const side of ["b", "n"]) {
        await flows.add({
          name: "parent",
          queueName: `${side}-parents`,
          opts: { jobId: "mom" },
          children: [{ name: "child", queueName: side, data: {}, opts: { jobId: "kid" } }],
        });
      }
    } finally {
      await flows.close();
    }
    for (const side of ["b", "n"]) await new Worker(side, succeed, { redis: sharedRedis(), prefix }).drain();
    await retryBoth(prefix, "kid", "completed");
    for (const side of ["b", "n"]) {
      // The parent stays where the child's completion released it.
      expect(await direct.lrange(`${prefix}:${side}-parents:wait`, 0, -1)).toEqual(["mom"]);
      const parentKey = `${prefix}:${side}-parents:mom`;
      expect(await direct.smembers(`${parentKey}:dependencies`)).toEqual([`${prefix}:${side}:kid`]);
      expect(await direct.hlen(`${parentKey}:processed`)).toBe(0);
    }
  });

  it("refuses a job in another state or a missing one, with typed errors and nothing written", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("n", { redis: sharedRedis(), prefix });
    const waiting = await queue.add("w", {});
    await new Worker("n", fail, { redis: sharedRedis(), prefix }).drain();
    const failed = await must(queue.getJob(waiting.id));
    const before = await keysUnder(direct, prefix);
    await expect(failed.retry("completed")).rejects.toThrow(JobNotInStateError);
    await expect(failed.retry("completed")).rejects.toThrow(/job "1" in queue "n" is not completed/);
    await direct.del(`${prefix}:n:1`);
    await expect(failed.retry()).rejects.toThrow(JobNotFoundError);
    expect(await keysUnder(direct, prefix)).toEqual(before.filter((key) => key !== `${prefix}:n:1`));
  });
});

describe("Job.retry when the answer is lost", () => {
  it("reports success once, retrying the job once", async () => {
    const stack = await startPrivateStack();
    try {
      const prefix = uniquePrefix();
      const queue = new Queue("n", { redis: stack.redis, prefix });
      await queue.add("x", {});
      await new Worker("n", fail, { redis: stack.redis, prefix }).drain();
      const job = await must(queue.getJob("1"));
      stack.rest.setFault({ kind: "drop-after", times: 1, command: "evalsha" });
      await job.retry();
      expect(await stack.direct.lrange(`${prefix}:n:wait`, 0, -1)).toEqual(["1"]);
      const events = await stack.direct.xrange(`${prefix}:n:events`, "-", "+");
      expect(events.filter(([, f]) => f[1] === "waiting" && f[5] === "failed")).toHaveLength(1);
    } finally {
      await stack.stop();
    }
  });
});
