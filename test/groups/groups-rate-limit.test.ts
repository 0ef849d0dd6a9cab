/**
 * Group rate limits (BullMQ Pro's group.limit, fixed windows) and rateLimitGroup, judged from the
 * recorded start times of two workers at once.
 */
import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, Worker } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup() {
  const prefix = uniquePrefix("glim");
  const redis = sharedRedis();
  return { prefix, redis, queue: new Queue("q", { redis, prefix }) };
}

const jobsOf = (group: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ name: group, data: { i }, opts: { group: { id: group } } }));

describe("group rate limits", () => {
  it("group.limit 5 per second: each group's window holds 5 starts, and the groups do not wait on each other", async () => {
    const { prefix, redis, queue } = setup();
    await queue.addBulk([...jobsOf("a", 12), ...jobsOf("b", 12), ...jobsOf("c", 12)]);
    const starts = new Map<string, number[]>();
    const order: string[] = [];
    const processor = async (job: ActiveJob) => {
      const list = starts.get(job.name) ?? [];
      list.push(Date.now());
      starts.set(job.name, list);
      order.push(job.name);
    };
    const options = {
      redis,
      prefix,
      batchSize: 20,
      concurrency: 20,
      group: { limit: { max: 5, duration: 1000 } },
    };
    const workers = [new Worker("q", processor, options), new Worker("q", processor, options)];
    // Drains in rounds, as invocations come and go; between them, until the next window opens.
    for (let round = 0; round < 10 && order.length < 36; round++) {
      const summaries = await Promise.all(workers.map((worker) => worker.drain()));
      const next = Math.min(...summaries.map((summary) => summary.nextDueAt ?? Number.POSITIVE_INFINITY));
      if (Number.isFinite(next)) await sleep(Math.max(0, next - Date.now()));
    }
    expect(order).toHaveLength(36);
    for (const group of ["a", "b", "c"]) {
      const times = starts.get(group) as number[];
      expect(times).toHaveLength(12);
      // Job 5k opens window k+1, at least a window after job 5(k-1) opened window k (lease → start
      // takes a few ms: 50 ms of slack).
      expect((times[5] as number) - (times[0] as number)).toBeGreaterThanOrEqual(950);
      expect((times[10] as number) - (times[5] as number)).toBeGreaterThanOrEqual(950);
      // No window holds a 6th start: the next start after the 5th of a window comes a window later.
      for (const first of [0, 5]) {
        const opened = times[first] as number;
        expect(times.filter((t) => t >= opened && t < opened + 950)).toHaveLength(5);
      }
    }
    // The first window of every group ran before any group's second: none held the others back.
    expect(new Set(order.slice(0, 15))).toEqual(new Set(["a", "b", "c"]));
    expect(order.slice(0, 15).filter((name) => name === "a")).toHaveLength(5);
  });

  it("rateLimitGroup holds only that group; its job comes back uncounted once the hold ends", async () => {
    const { prefix, redis, queue } = setup();
    await queue.addBulk([...jobsOf("hold", 2), ...jobsOf("go", 4)]);
    const runs: { name: string; at: number; attemptsMade: number }[] = [];
    let held = 0;
    const worker: Worker = new Worker(
      "q",
      async (job: ActiveJob) => {
        runs.push({ name: job.name, at: Date.now(), attemptsMade: job.attemptsMade });
        if (job.name === "hold" && held++ === 0) {
          await worker.rateLimitGroup(job, 600);
          throw Worker.RateLimitError();
        }
      },
      // One job a call: the hold's second job is not leased before the hold.
      { redis, prefix, batchSize: 1, concurrency: 1 },
    );
    const heldAt = Date.now();
    const first = await worker.drain();
    expect(first.completed).toBe(4);
    expect(runs.filter((run) => run.name === "go")).toHaveLength(4);
    expect(await queue.getGroupStatus("hold")).toMatchObject({ waiting: 2 });
    // Held by its limit (out of the ring), it is still listed, as limited.
    expect(await queue.getGroups()).toEqual([{ id: "hold", status: "limited", waiting: 2, active: 0 }]);
    for (let i = 0; i < 5 && runs.filter((run) => run.name === "hold").length < 3; i++) {
      await sleep(250);
      await worker.drain();
    }
    const holds = runs.filter((run) => run.name === "hold");
    expect(holds).toHaveLength(3);
    expect((holds[1]?.at as number) - heldAt).toBeGreaterThanOrEqual(550);
    expect(holds.map((run) => run.attemptsMade)).toEqual([0, 0, 0]);
    expect(await queue.getGroupStatus("hold")).toMatchObject({ status: "empty" });
  });
});
