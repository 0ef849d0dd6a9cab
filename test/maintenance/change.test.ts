/**
 * `Job.changeDelay` and `Job.changePriority` against bullmq@6.7.0 on identically prepared queues, the
 * order a real BullMQ Worker then takes jobs in, and bad input.
 */
import { describe, expect, it } from "vitest";
import { JobNotFoundError, JobNotInStateError, ValidationError } from "../../core/index.ts";
import { interopPeers, waitFor } from "../support/bullmq-peer.ts";
import { keysUnder } from "../support/stack.ts";
import {
  direct,
  eventsSince,
  lastEventId,
  pictures,
  sides,
  twins,
  useTwins,
} from "../support/twin-queues.ts";

useTwins();
const peers = interopPeers();

describe("Job.changeDelay does what BullMQ's job.changeDelay does", () => {
  it("reschedules a delayed job from now, with a delayed event and the marker at the earliest job", async () => {
    const t = twins();
    const now = Date.now();
    for (const side of sides) {
      await t.queue(side).addBulk([
        { name: "a", data: {}, opts: { timestamp: now, delay: 60_000 } },
        { name: "b", data: {}, opts: { timestamp: now, delay: 120_000 } },
        { name: "c", data: {}, opts: { timestamp: now } },
      ]);
    }
    const since = { b: await lastEventId(t.prefix, "b"), n: await lastEventId(t.prefix, "n") };
    const before = Date.now();
    await (await t.bull("b").getJob("1"))?.changeDelay(300_000);
    const job = await t.queue("n").getJob("1");
    await job?.changeDelay(300_000);
    const after = Date.now();
    expect(job?.delay).toBe(300_000);

    const [b, n] = await pictures(t);
    // Scores are clocks: compare them apart.
    const scoresOf = (picture: Record<string, unknown>, key: string) => picture[key] as string[];
    const { delayed: bDelayed, marker: bMarker, ...bRest } = b;
    const { delayed: nDelayed, marker: nMarker, ...nRest } = n;
    expect(nRest).toEqual(bRest);
    expect(scoresOf(n, "delayed").filter((_, i) => i % 2 === 0)).toEqual(["2", "1"]);
    expect(scoresOf(b, "delayed").filter((_, i) => i % 2 === 0)).toEqual(["2", "1"]);
    const due = Number(scoresOf(n, "delayed")[3]) / 4096;
    expect(due).toBeGreaterThanOrEqual(before + 300_000);
    expect(due).toBeLessThanOrEqual(after + 300_000);
    expect(nMarker).toEqual(bMarker);
    expect(nMarker).toEqual(["0", "0", "1", String(now + 120_000)]);
    expect(bDelayed).toBeDefined();
    expect(nDelayed).toBeDefined();
    const [ours] = await eventsSince(t.prefix, "n", since.n);
    const [theirs] = await eventsSince(t.prefix, "b", since.b);
    expect(ours?.slice(0, 5)).toEqual(theirs?.slice(0, 5));
    expect(ours).toEqual(["event", "delayed", "jobId", "1", "delay", String(due)]);
  });

  it("refuses a job that is not delayed or gone, and bad delays, writing nothing", async () => {
    const t = twins();
    const queue = t.queue("n");
    const ready = await queue.add("ready", {});
    const later = await queue.add("later", {}, { delay: 60_000 });
    await expect(ready.changeDelay(1000)).rejects.toBeInstanceOf(JobNotInStateError);
    await expect(
      t
        .bull("n")
        .getJob("1")
        .then((job) => job?.changeDelay(1000)),
    ).rejects.toThrow(/delayed/);
    const before = await keysUnder(direct, t.prefix);
    for (const delay of [-1, 1.5, "5", Number.NaN]) {
      const call = later.changeDelay(delay as number);
      await expect(call).rejects.toBeInstanceOf(ValidationError);
      await expect(call).rejects.toMatchObject({ field: "delay" });
    }
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
    await direct.del(t.key("n", "2"));
    await expect(later.changeDelay(1000)).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it("lets a real BullMQ Worker run a job whose delay went to 0 at once", async () => {
    const io = peers("cd");
    const queue = io.queue("q");
    const { started, idle } = io.worker("q");
    await idle();
    const job = await queue.add("later", {}, { delay: 3_600_000 });
    await job.changeDelay(0);
    const [seen] = await started(1, 4000);
    expect(seen?.name).toBe("later");
    expect(seen?.delay).toBe(0);
  });
});

describe("Job.changePriority does what BullMQ's job.changePriority does", () => {
  it("places waiting and prioritized jobs again, stores the priority of others, writes no event", async () => {
    const t = twins();
    const now = Date.now();
    for (const side of sides) {
      await t.queue(side).addBulk([
        { name: "p1", data: {}, opts: { timestamp: now, priority: 5 } },
        { name: "p2", data: {}, opts: { timestamp: now, priority: 5 } },
        { name: "p3", data: {}, opts: { timestamp: now, priority: 5 } },
        { name: "w1", data: {}, opts: { timestamp: now } },
        { name: "w2", data: {}, opts: { timestamp: now } },
        { name: "w3", data: {}, opts: { timestamp: now } },
        { name: "d1", data: {}, opts: { timestamp: now, delay: 60_000 } },
      ]);
    }
    const since = { b: await lastEventId(t.prefix, "b"), n: await lastEventId(t.prefix, "n") };
    const changes: [string, { priority?: number; lifo?: boolean }][] = [
      ["3", { priority: 1 }],
      ["2", { priority: 5, lifo: true }],
      ["4", { priority: 2 }],
      ["5", { priority: 0, lifo: true }],
      ["1", {}],
      ["7", { priority: 3 }],
    ];
    for (const [id, opts] of changes) {
      await (await t.bull("b").getJob(id))?.changePriority(opts);
      const job = await t.queue("n").getJob(id);
      await job?.changePriority(opts);
      expect(job?.priority).toBe(opts.priority ?? 0);
    }
    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect(n.wait).toEqual(["1", "6", "5"]);
    expect((n.prioritized as string[]).filter((_, i) => i % 2 === 0)).toEqual(["3", "4", "2"]);
    expect((n["7"] as Record<string, string>).priority).toBe("3");
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual([]);
    expect(await eventsSince(t.prefix, "b", since.b)).toEqual([]);
  });

  it("changes the order a real BullMQ Worker takes jobs in", async () => {
    const io = peers("cp");
    const queue = io.queue("q");
    const jobs = await queue.addBulk(
      ["low", "mid", "high", "plain"].map((name) => ({ name, data: {}, opts: { priority: 10 } })),
    );
    await jobs[2]?.changePriority({ priority: 1 });
    await jobs[1]?.changePriority({ priority: 10, lifo: true });
    await jobs[3]?.changePriority({ priority: 0 });
    const { started } = io.worker("q");
    const seen = await started(4);
    expect(seen.map((s) => s.name)).toEqual(["plain", "high", "mid", "low"]);
    expect(seen.map((s) => s.priority)).toEqual([0, 1, 10, 10]);
    await waitFor(async () => (await io.bullQueue("q").getJobCounts("completed")).completed === 4, "done");
  });

  it("takes a waiting job out of wait from the end nearer its time", async () => {
    const io = peers("cpw");
    const queue = io.queue("q");
    const base = Date.now() - 60_000;
    const jobs = [];
    for (let i = 0; i < 5; i++) jobs.push(await queue.add(`j${i}`, {}, { timestamp: base + i * 1000 }));
    const ids = jobs.map((job) => job.id);
    const wait = io.key("q", "wait");
    // An id planted twice, one entry in from the far end, shows the direction: the newest job's left
    // copy goes, then the oldest job's right one.
    await io.raw.linsert(wait, "BEFORE", ids[0] as string, ids[4] as string);
    await jobs[4]?.changePriority({ priority: 2 });
    expect(await io.raw.lrange(wait, 0, -1)).toEqual([3, 2, 1, 4, 0].map((i) => ids[i]));
    await io.raw.linsert(wait, "AFTER", ids[3] as string, ids[0] as string);
    await jobs[0]?.changePriority({ priority: 1 });
    expect(await io.raw.lrange(wait, 0, -1)).toEqual([3, 0, 2, 1, 4].map((i) => ids[i]));
    expect(await io.raw.zrange(io.key("q", "prioritized"), 0, -1)).toEqual([ids[0], ids[4]]);
  });

  it("refuses bad options and a missing job, writing nothing", async () => {
    const t = twins();
    const queue = t.queue("n");
    const job = await queue.add("x", {}, { priority: 3 });
    const before = await keysUnder(direct, t.prefix);
    const bad: [unknown, string][] = [
      [{ priority: -1 }, "priority"],
      [{ priority: 2_097_152 }, "priority"],
      [{ priority: 1.5 }, "priority"],
      [{ lifo: "yes" }, "lifo"],
      [{ priority: 1, urgent: true }, "opts.urgent"],
      [null, "opts"],
    ];
    for (const [opts, field] of bad) {
      const call = job.changePriority(opts as never);
      await expect(call).rejects.toBeInstanceOf(ValidationError);
      await expect(call).rejects.toMatchObject({ field });
    }
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
    await direct.multi().del(t.key("n", "1")).zrem(t.key("n", "prioritized"), "1").exec();
    await expect(job.changePriority({ priority: 1 })).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await direct.exists(t.key("n", "1"))).toBe(0);
  });
});
