/**
 * Grouped jobs (BullMQ Pro's groups, opts.group): where they live, round-robin between groups,
 * ungrouped jobs first, retries and delays inside a group, and what BullMQ's structures see.
 */
import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, ValidationError, Worker } from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function setup(workerOptions: Partial<ConstructorParameters<typeof Worker>[2]> = {}) {
  const prefix = uniquePrefix();
  const redis = sharedRedis();
  const queue = new Queue("q", { redis, prefix });
  const make = (processor: (job: ActiveJob) => Promise<unknown>) =>
    new Worker("q", processor, { redis, prefix, batchSize: 6, concurrency: 1, ...workerOptions });
  return { prefix, queue, make };
}

const group = (id: string) => ({ group: { id } });

describe("grouped jobs", () => {
  it("never enter wait, prioritized or delayed, and keep BullMQ's hash with their group id", async () => {
    const { prefix, queue } = setup();
    await queue.add("a", { n: 1 }, group("t1"));
    await queue.add("b", { n: 2 }, { ...group("t1"), priority: 3 });
    await queue.add("c", { n: 3 }, { ...group("t2"), delay: 60_000 });
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(0);
    expect(await direct.zcard(`${prefix}:q:prioritized`)).toBe(0);
    expect(await direct.zcard(`${prefix}:q:delayed`)).toBe(0);
    expect(await direct.zrange(`${prefix}:q:nq:g:t1`, 0, -1)).toEqual(["1", "2"]);
    expect(await direct.zrange(`${prefix}:q:nq:groups`, 0, -1)).toEqual(["t1"]);
    expect(await direct.zrange(`${prefix}:q:nq:gdelayed`, 0, -1)).toEqual(["3"]);
    const hash = await direct.hgetall(`${prefix}:q:1`);
    expect(hash).toMatchObject({ name: "a", gid: "t1" });
    expect(JSON.parse(hash.opts as string)).toMatchObject({ group: { id: "t1" } });
  });

  it("refuses a group id that cannot name a key, naming the field", async () => {
    const { queue } = setup();
    await expect(queue.add("a", {}, group("a:b"))).rejects.toThrow(ValidationError);
    await expect(queue.add("a", {}, group(""))).rejects.toThrow(/opts\.group\.id/);
    await expect(queue.add("a", {}, { group: { id: "x", max: 1 } } as never)).rejects.toThrow(/group/);
  });

  it("serves groups round-robin, ungrouped jobs first", async () => {
    const { queue, make } = setup();
    await queue.addBulk(
      Array.from({ length: 6 }, (_, i) => ({ name: "big", data: { i }, opts: group("big") })),
    );
    await queue.addBulk(
      Array.from({ length: 2 }, (_, i) => ({ name: "small", data: { i }, opts: group("small") })),
    );
    await queue.add("plain", {});
    const seen: string[] = [];
    const worker = make(async (job) => {
      seen.push(job.name);
    });
    const summary = await worker.drain();
    expect(summary).toMatchObject({ leased: 9, completed: 9 });
    expect(seen[0]).toBe("plain");
    // A lease of up to 6 shares its jobs between the groups and starts them in turn.
    expect(seen).toEqual(["plain", "big", "small", "big", "small", "big", "big", "big", "big"]);
  });

  it("retries a grouped job inside its group, with backoff through the grouped delayed set", async () => {
    const { prefix, queue, make } = setup();
    await queue.add("flaky", {}, { ...group("g"), attempts: 2, backoff: { type: "fixed", delay: 300 } });
    let runs = 0;
    const worker = make(async () => {
      runs += 1;
      if (runs === 1) throw new Error("first");
      return "ok";
    });
    const first = await worker.drain();
    expect(first).toMatchObject({ retried: 1 });
    expect(await direct.zrange(`${prefix}:q:nq:gdelayed`, 0, -1)).toEqual(["1"]);
    expect(await direct.zcard(`${prefix}:q:delayed`)).toBe(0);
    expect(first.nextDueAt).toBeGreaterThan(Date.now() - 100);
    await new Promise((r) => setTimeout(r, 350));
    const second = await worker.drain();
    expect(second).toMatchObject({ completed: 1 });
    expect(await direct.hget(`${prefix}:q:1`, "atm")).toBe("2");
    expect(await direct.exists(`${prefix}:q:nq:grun`)).toBe(0);
    expect(await direct.exists(`${prefix}:q:nq:groups`)).toBe(0);
  });

  it("a grouped addBulk larger than one call is staged, then committed into the groups at once", async () => {
    const { prefix, queue } = setup();
    const jobs = Array.from({ length: 2500 }, (_, i) => ({
      name: "n",
      data: { i },
      opts:
        i % 5 === 4
          ? {}
          : {
              group: { id: `t${i % 3}` },
              ...(i % 50 === 1 ? { delay: 60_000 } : {}),
              ...(i === 2 ? { deduplication: { id: "once" } } : {}),
            },
    }));
    const added = await queue.addBulk(jobs);
    expect(added).toHaveLength(2500);
    const grouped = jobs.filter((job) => "group" in job.opts).length;
    const delayed = jobs.filter((job) => "delay" in job.opts).length;
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(500);
    expect(await direct.zcard(`${prefix}:q:delayed`)).toBe(0);
    expect(await direct.zcard(`${prefix}:q:nq:gdelayed`)).toBe(delayed);
    const ready = await Promise.all(["t0", "t1", "t2"].map((id) => direct.zcard(`${prefix}:q:nq:g:${id}`)));
    expect(ready.reduce((a, b) => a + b, 0)).toBe(grouped - delayed);
    // In order inside a group: the first of t0 is the first added.
    expect((await direct.zrange(`${prefix}:q:nq:g:t0`, 0, 0))[0]).toBe(added[0]?.id);
    expect(await direct.hget(`${prefix}:q:${added[2]?.id}`, "gid")).toBe("t2");
    expect(await direct.zscore(`${prefix}:q:nq:g:t2`, added[2]?.id as string)).not.toBeNull();
  });
});
