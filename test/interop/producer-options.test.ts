/**
 * The options of nimbusq's adds take effect in a real BullMQ 6.7.0 Worker: retries and backoff,
 * keep/remove on finish, custom ids and their duplicates, and every deduplication mode.
 */
import { describe, expect, it } from "vitest";
import { interopPeers, readable, sleep, waitFor } from "../support/bullmq-peer.ts";

const peers = interopPeers();

const fail = () => {
  throw new Error("boom");
};

describe("attempts and backoff", () => {
  it("retries a numeric (fixed) backoff the given number of times, spaced by the delay", async () => {
    const io = peers();
    const queue = io.queue("retry");
    const job = await queue.add("r", { n: 1 }, { attempts: 3, backoff: 200 });
    const { started } = io.worker("retry", fail);
    const seen = await started(3);
    expect(seen.map((s) => s.attemptsMade)).toEqual([0, 1, 2]);
    expect((seen[1]?.startedAt ?? 0) - (seen[0]?.startedAt ?? 0)).toBeGreaterThanOrEqual(195);
    expect((seen[2]?.startedAt ?? 0) - (seen[1]?.startedAt ?? 0)).toBeGreaterThanOrEqual(195);
    await waitFor(async () => (await job.getState()) === "failed", "the final failure");
    const ours = await queue.getJob(job.id);
    const theirs = await io.bullQueue("retry").getJob(job.id);
    expect(readable(ours)).toEqual(readable(theirs));
    expect(ours).toMatchObject({ attemptsMade: 3, attemptsStarted: 3, failedReason: "boom" });
    expect(ours?.stacktrace).toHaveLength(3);
  });

  it("doubles an exponential backoff and retries at once without one", async () => {
    const io = peers();
    const queue = io.queue("retry");
    await queue.add("exp", {}, { attempts: 3, backoff: { type: "exponential", delay: 150 } });
    const { started } = io.worker("retry", fail);
    const exp = await started(3);
    expect((exp[1]?.startedAt ?? 0) - (exp[0]?.startedAt ?? 0)).toBeGreaterThanOrEqual(145);
    expect((exp[2]?.startedAt ?? 0) - (exp[1]?.startedAt ?? 0)).toBeGreaterThanOrEqual(295);

    const now = await queue.add("now", {}, { attempts: 2 });
    const all = await started(5);
    expect(all.slice(3).map((s) => [s.name, s.attemptsMade])).toEqual([
      ["now", 0],
      ["now", 1],
    ]);
    await waitFor(async () => (await now.getState()) === "failed", "the final failure");
    expect((await queue.getJob(now.id))?.attemptsMade).toBe(2);
  });
});

describe("removeOnComplete / removeOnFail", () => {
  it("true removes at once, false and undefined keep, a number keeps the newest N", async () => {
    const io = peers();
    const queue = io.queue("keep");
    const gone = await queue.add("gone", {}, { removeOnComplete: true });
    const kept = await queue.add("kept", {}, { removeOnComplete: false });
    const plain = await queue.add("plain", {});
    const failGone = await queue.add("fail-gone", {}, { removeOnFail: true });
    const failKept = await queue.add("fail-kept", {}, { removeOnFail: { count: 5 } });
    // A count prunes the whole finished set, so those jobs get a queue of their own.
    const countQueue = io.queue("count");
    const counted = [];
    for (let i = 0; i < 4; i++) counted.push(await countQueue.add(`count-${i}`, {}, { removeOnComplete: 2 }));
    const onKeep = io.worker("keep", (job) => (job.name.startsWith("fail") ? fail() : "ok"));
    const onCount = io.worker("count");
    await onKeep.started(5);
    await onCount.started(4);
    await waitFor(async () => (await queue.getJobCounts("failed")).failed === 1, "the failures");
    await waitFor(async () => (await queue.getJobCounts("completed")).completed === 2, "the completions");
    await waitFor(
      async () => (await countQueue.getJobCounts("completed")).completed === 2,
      "the count pruning",
    );
    const bull = io.bullQueue("keep");
    const bullCount = io.bullQueue("count");
    for (const job of [gone, failGone]) {
      expect(await queue.getJob(job.id), job.name).toBeUndefined();
      expect(await bull.getJob(job.id), job.name).toBeUndefined();
    }
    for (const job of [counted[0], counted[1]]) {
      expect(await countQueue.getJob(job?.id as string), job?.name).toBeUndefined();
      expect(await bullCount.getJob(job?.id as string), job?.name).toBeUndefined();
    }
    for (const job of [kept, plain, failKept]) expect(await queue.getJob(job.id), job.name).toBeDefined();
    expect((await queue.getCompleted()).map((j) => j.name)).toEqual(["plain", "kept"]);
    expect((await queue.getFailed()).map((j) => j.name)).toEqual(["fail-kept"]);
    expect((await countQueue.getCompleted()).map((j) => j.name)).toEqual(["count-3", "count-2"]);
  });

  it("an age keeps a finished job at most that many seconds", async () => {
    const io = peers();
    const queue = io.queue("age");
    const first = await queue.add("first", {}, { removeOnComplete: { age: 1 } });
    const { started } = io.worker("age");
    await started(1);
    await waitFor(async () => (await first.getState()) === "completed", "the first completion");
    await sleep(1100);
    await queue.add("second", {}, { removeOnComplete: { age: 1 } });
    await started(2);
    await waitFor(async () => (await queue.getJob(first.id)) === undefined, "the age pruning");
    expect((await queue.getCompleted()).map((j) => j.name)).toEqual(["second"]);
  });
});

describe("custom ids", () => {
  it("a duplicate custom id is one job, run once with the first data, also after it completed", async () => {
    const io = peers();
    const queue = io.queue("custom");
    const first = await queue.add("custom", { n: 5 }, { jobId: "my-job" });
    const again = await queue.add("custom", { n: 6 }, { jobId: "my-job" });
    expect([first.id, again.id]).toEqual(["my-job", "my-job"]);
    const { started, seen } = io.worker("custom");
    await started(1);
    await waitFor(async () => (await first.getState()) === "completed", "completion");
    await queue.add("custom", { n: 7 }, { jobId: "my-job" });
    await queue.add("marker", {});
    await started(2);
    expect(seen.map((s) => [s.id, s.data])).toEqual([
      ["my-job", { n: 5 }],
      ["4", {}],
    ]);
    expect((await io.bullQueue("custom").getJob("my-job"))?.data).toEqual({ n: 5 });
  });
});

describe("deduplication", () => {
  it("simple: one job while the owner lives; a new window once a BullMQ worker finished it", async () => {
    const io = peers();
    const queue = io.queue("dedup");
    const a = await queue.add("a", { n: 1 }, { deduplication: { id: "d" } });
    const b = await queue.add("b", { n: 2 }, { deduplication: { id: "d" } });
    expect(b.id).toBe(a.id);
    const { started, seen } = io.worker("dedup");
    await started(1);
    await waitFor(async () => (await io.raw.exists(io.key("dedup", "de:d"))) === 0, "the key's cleanup");
    const c = await queue.add("c", { n: 3 }, { deduplication: { id: "d" } });
    expect(c.id).not.toBe(a.id);
    await started(2);
    expect(seen.map((s) => [s.name, s.data, s.deduplicationId])).toEqual([
      ["a", { n: 1 }, "d"],
      ["c", { n: 3 }, "d"],
    ]);
  });

  it("ttl: the window outlives the job and ends with the ttl", async () => {
    const io = peers();
    const queue = io.queue("dedup");
    const a = await queue.add("a", {}, { deduplication: { id: "t", ttl: 500 } });
    const { started, seen } = io.worker("dedup");
    await started(1);
    await waitFor(async () => (await a.getState()) === "completed", "completion");
    const b = await queue.add("b", {}, { deduplication: { id: "t", ttl: 500 } });
    expect(b.id).toBe(a.id);
    await waitFor(async () => (await io.raw.exists(io.key("dedup", "de:t"))) === 0, "the ttl", 2000);
    const c = await queue.add("c", {}, { deduplication: { id: "t", ttl: 500 } });
    expect(c.id).not.toBe(a.id);
    await started(2);
    expect(seen.map((s) => s.name)).toEqual(["a", "c"]);
  });

  it("ttl + extend: each duplicate restarts the window", async () => {
    const io = peers();
    const queue = io.queue("dedup");
    const dedup = { id: "x", ttl: 500, extend: true };
    const a = await queue.add("a", {}, { delay: 5000, deduplication: dedup });
    await sleep(300);
    expect((await queue.add("b", {}, { deduplication: dedup })).id).toBe(a.id);
    await sleep(300);
    // 600 ms after the first add: without extend the window would be over.
    expect((await queue.add("c", {}, { deduplication: dedup })).id).toBe(a.id);
    const pttl = await io.raw.pttl(io.key("dedup", "de:x"));
    expect(pttl).toBeGreaterThan(300);
    expect(await io.bullQueue("dedup").getJobCounts()).toMatchObject({ delayed: 1, waiting: 0 });
  });

  it("replace: a delayed owner is replaced by the newest job, which a BullMQ worker runs once", async () => {
    const io = peers();
    const queue = io.queue("dedup");
    const dedup = { id: "r", ttl: 5000, replace: true };
    const a = await queue.add("a", { v: 1 }, { delay: 400, deduplication: dedup });
    const b = await queue.add("b", { v: 2 }, { delay: 400, deduplication: dedup });
    expect(b.id).not.toBe(a.id);
    const bull = io.bullQueue("dedup");
    expect(await bull.getJob(a.id)).toBeUndefined();
    expect(await io.raw.get(io.key("dedup", "de:r"))).toBe(b.id);
    const { started, seen } = io.worker("dedup");
    await started(1);
    await sleep(200);
    expect(seen.map((s) => [s.id, s.name, s.data])).toEqual([[b.id, "b", { v: 2 }]]);
    expect(seen[0]?.startedAt).toBeGreaterThanOrEqual(b.timestamp + 400);
  });
});
