/**
 * Group controls across several workers at once (as several Lambda invocations run): the per-group
 * concurrency counted from inside the processors, pause and resume, the getters, job states.
 */
import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, Worker } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup() {
  const prefix = uniquePrefix();
  const redis = sharedRedis();
  const queue = new Queue("q", { redis, prefix });
  const make = (processor: (job: ActiveJob) => Promise<unknown>, options: object = {}) =>
    new Worker("q", processor, { redis, prefix, batchSize: 20, concurrency: 20, ...options });
  return { queue, make };
}

const jobsOf = (group: string, count: number, name = group) =>
  Array.from({ length: count }, (_, i) => ({ name, data: { i }, opts: { group: { id: group } } }));

describe("group controls", () => {
  it("group.concurrency 2 over three workers: no group ever runs more than 2, the others keep going", async () => {
    const { queue, make } = setup();
    await queue.addBulk([...jobsOf("a", 30), ...jobsOf("b", 30), ...jobsOf("c", 4)]);
    await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: "plain", data: { i } })));
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const processor = async (job: ActiveJob) => {
      const group = (job.opts.group as { id: string } | undefined)?.id ?? "-";
      running.set(group, (running.get(group) ?? 0) + 1);
      most.set(group, Math.max(most.get(group) ?? 0, running.get(group) ?? 0));
      await sleep(3 + (Number((job.data as { i: number }).i) % 4) * 2);
      running.set(group, (running.get(group) ?? 0) - 1);
    };
    const workers = [1, 2, 3].map(() => make(processor, { group: { concurrency: 2 } }));
    let done = 0;
    // Drains in rounds, as invocations come and go, until every job ran.
    for (let round = 0; round < 40 && done < 84; round++) {
      const summaries = await Promise.all(workers.map((worker) => worker.drain()));
      done += summaries.reduce((sum, summary) => sum + summary.completed, 0);
    }
    expect(done).toBe(84);
    expect(most.get("a")).toBe(2);
    expect(most.get("b")).toBe(2);
    expect(most.get("c")).toBeLessThanOrEqual(2);
    // Ungrouped jobs are not held by the groups' limit.
    expect(most.get("-")).toBeGreaterThan(2);
    expect(await queue.getGroups()).toEqual([]);
  });

  it("pauseGroup holds one group while the others run; resumeGroup lets it go in turn", async () => {
    const { queue, make } = setup();
    await queue.addBulk([...jobsOf("held", 3), ...jobsOf("free", 3)]);
    expect(await queue.pauseGroup("held")).toBe(true);
    expect(await queue.pauseGroup("held")).toBe(false);
    const seen: string[] = [];
    const worker = make(async (job) => {
      seen.push(job.name);
    });
    expect(await worker.drain()).toMatchObject({ completed: 3 });
    expect(seen).toEqual(["free", "free", "free"]);
    expect(await queue.getGroupStatus("held")).toEqual({
      id: "held",
      status: "paused",
      waiting: 3,
      active: 0,
    });
    expect(await queue.getGroupJobsCount("held")).toBe(3);
    await queue.add("late", {}, { group: { id: "held" } });
    expect(await worker.drain()).toMatchObject({ completed: 0 });
    expect(await queue.resumeGroup("held")).toBe(true);
    expect(await queue.getGroupStatus("held")).toMatchObject({ status: "waiting", waiting: 4 });
    expect(await worker.drain()).toMatchObject({ completed: 4 });
    expect(await queue.getGroupStatus("held")).toEqual({
      id: "held",
      status: "empty",
      waiting: 0,
      active: 0,
    });
  });

  it("reads groups, their jobs and counts, and a grouped job's state", async () => {
    const { queue } = setup();
    const [first] = await queue.addBulk([...jobsOf("t2", 2), ...jobsOf("t1", 3)]);
    const delayed = await queue.add("later", {}, { group: { id: "t1" }, delay: 60_000 });
    expect(await queue.getGroups()).toEqual([
      { id: "t1", status: "waiting", waiting: 3, active: 0 },
      { id: "t2", status: "waiting", waiting: 2, active: 0 },
    ]);
    expect(await queue.getGroups(1, 1)).toEqual([{ id: "t2", status: "waiting", waiting: 2, active: 0 }]);
    expect((await queue.getGroupJobs("t1")).map((job) => job.data)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(await queue.getGroupsJobsCount(1)).toBe(5);
    expect(await queue.getGroupActiveCount("t1")).toBe(0);
    expect(await queue.getJobState(first?.id as string)).toBe("waiting");
    expect(await first?.getState()).toBe("waiting");
    expect(await queue.getJobState(delayed.id)).toBe("delayed");
    expect(await queue.getJobState("nope")).toBe("unknown");
    await expect(queue.getGroupStatus("a:b")).rejects.toThrow(/groupId/);
  });
});
