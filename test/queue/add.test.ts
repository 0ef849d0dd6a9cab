import { describe, expect, it } from "vitest";
import { Queue } from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function newQueue(name = "q") {
  const prefix = uniquePrefix();
  return { prefix, queue: new Queue(name, { redis: sharedRedis(), prefix }) };
}

async function events(key: string): Promise<string[][]> {
  const entries = await direct.xrange(key, "-", "+");
  return entries.map(([, fields]) => fields);
}

describe("Queue.add", () => {
  it("writes a standard job in BullMQ's layout with marker and events", async () => {
    const { prefix, queue } = newQueue();
    const job = await queue.add("ok", { n: 1 }, { removeOnComplete: false });
    expect(job.id).toBe("1");
    const hash = await direct.hgetall(`${prefix}:q:1`);
    expect(hash).toMatchObject({ name: "ok", data: '{"n":1}', delay: "0", priority: "0" });
    expect(JSON.parse(hash.opts as string)).toEqual({ removeOnComplete: false, attempts: 0 });
    expect(await direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["1"]);
    expect(await direct.zrange(`${prefix}:q:marker`, 0, -1, "WITHSCORES")).toEqual(["0", "0"]);
    expect(await events(`${prefix}:q:events`)).toEqual([
      ["event", "added", "jobId", "1", "name", "ok"],
      ["event", "waiting", "jobId", "1"],
    ]);
  });

  it("scores delayed and prioritized jobs as BullMQ does", async () => {
    const { prefix, queue } = newQueue();
    const delayed = await queue.add("later", {}, { delay: 60000, timestamp: 1795299784831 });
    const p5 = await queue.add("prio", {}, { priority: 5 });
    const p1 = await queue.add("prio", {}, { priority: 1 });
    expect(await direct.zscore(`${prefix}:q:delayed`, delayed.id)).toBe(
      String((1795299784831 + 60000) * 4096),
    );
    expect(await direct.zrange(`${prefix}:q:prioritized`, 0, -1, "WITHSCORES")).toEqual([
      p1.id,
      String(1 * 2 ** 32 + 2),
      p5.id,
      String(5 * 2 ** 32 + 1),
    ]);
    const marker = await direct.zrange(`${prefix}:q:marker`, 0, -1, "WITHSCORES");
    expect(marker).toEqual(["0", "0", "1", String(1795299784831 + 60000)]);
    const evs = await events(`${prefix}:q:events`);
    expect(evs[1]).toEqual(["event", "delayed", "jobId", delayed.id, "delay", String(1795299784831 + 60000)]);
  });

  it("returns an existing custom id unchanged and emits duplicated", async () => {
    const { prefix, queue } = newQueue();
    const first = await queue.add("custom", { n: 5 }, { jobId: "my-job" });
    const second = await queue.add("custom", { n: 6 }, { jobId: "my-job" });
    expect([first.id, second.id]).toEqual(["my-job", "my-job"]);
    expect(await direct.hget(`${prefix}:q:my-job`, "data")).toBe('{"n":5}');
    expect(await direct.get(`${prefix}:q:id`)).toBe("2");
    const evs = await events(`${prefix}:q:events`);
    expect(evs.at(-1)).toEqual(["event", "duplicated", "jobId", "my-job"]);
  });

  it("adds a bulk in order with one id range", async () => {
    const { prefix, queue } = newQueue();
    const jobs = await queue.addBulk(Array.from({ length: 5 }, (_, n) => ({ name: "b", data: { n } })));
    expect(jobs.map((j) => j.id)).toEqual(["1", "2", "3", "4", "5"]);
    expect(await direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["5", "4", "3", "2", "1"]);
    const counts = await queue.getJobCounts();
    expect(counts).toMatchObject({ waiting: 5, active: 0, delayed: 0 });
  });
});

describe("Queue.getJobWithState", () => {
  it("reads a job and its state in one call, and undefined for an unknown id", async () => {
    const { queue } = newQueue();
    const job = await queue.add("x", { n: 1 }, { delay: 60_000 });
    const read = await queue.getJobWithState(job.id);
    expect(read?.state).toBe("delayed");
    expect(read?.job.data).toEqual({ n: 1 });
    expect(await queue.getJobWithState("missing")).toBeUndefined();
  });
});
