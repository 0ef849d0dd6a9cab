/**
 * Fairness between tenants (issue 26): one tenant adds 10,000 jobs, then nine tenants add 100 each;
 * with round-robin between groups, every one of the nine tenants' jobs has started before the big
 * tenant's 1,500th has. Judged from the recorded start order, two workers at once.
 */
import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, Worker } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

describe("fair queues", () => {
  it("nine small tenants behind one tenant's 10,000 jobs all start before its 1,500th", async () => {
    const prefix = uniquePrefix("fair");
    const redis = sharedRedis();
    const queue = new Queue("q", { redis, prefix, events: "final" });
    const tenant = (id: string, count: number) =>
      Array.from({ length: count }, (_, i) => ({ name: id, data: { i }, opts: { group: { id } } }));
    await queue.addBulk(tenant("big", 10_000));
    for (let t = 1; t <= 9; t++) await queue.addBulk(tenant(`small-${t}`, 100));
    const starts: string[] = [];
    const enough = new AbortController();
    let bigStarts = 0;
    const processor = async (job: ActiveJob) => {
      starts.push(job.name);
      // Enough of the backlog to judge: the drains stop leasing past the big tenant's 1,500th start.
      if (job.name === "big" && ++bigStarts >= 1500) enough.abort();
    };
    const options = { redis, prefix, batchSize: 50, concurrency: 50, events: "final" as const };
    const workers = [new Worker("q", processor, options), new Worker("q", processor, options)];
    await Promise.all(workers.map((worker) => worker.drain({ signal: enough.signal })));
    console.log("starts", starts.length, await queue.getGroups());
    let big = 0;
    const at1500 = starts.findIndex((name) => name === "big" && ++big === 1500);
    expect(at1500).toBeGreaterThan(0);
    const small = starts.slice(0, at1500).filter((name) => name !== "big");
    expect(small).toHaveLength(900);
    expect(await queue.getGroupJobsCount("small-1")).toBe(0);
  }, 60_000);
});
