/**
 * nimbusq's pause/resume/isPaused and job.remove() against a real BullMQ 6.7.0 Queue and Worker.
 */
import { describe, expect, it } from "vitest";
import { JobLockedError, Queue, type RedisPort, toRedisPort } from "../../core/index.ts";
import { type Interop, interopPeers, producer, sleep, waitFor } from "../support/bullmq-peer.ts";

const peers = interopPeers();

describe("pause and resume", () => {
  it("a queue paused by nimbusq starves a BullMQ worker until nimbusq resumes it", async () => {
    const io = peers();
    const queue = io.queue("p");
    const bull = io.bullQueue("p");
    const { log } = await io.events("p");
    const { started, seen, idle } = io.worker("p");
    await idle();
    await queue.pause();
    expect(await queue.isPaused()).toBe(true);
    expect(await bull.isPaused()).toBe(true);
    await queue.add("a", {});
    await queue.add("b", {}, { priority: 1 });
    await queue.add("c", {}, { delay: 200 });
    await sleep(600);
    expect(seen).toEqual([]);
    expect(await bull.getJobCounts("waiting", "prioritized", "delayed")).toEqual({
      waiting: 2, // "c" was promoted while paused, as BullMQ does
      prioritized: 1,
      delayed: 0,
    });
    expect(await io.raw.exists(io.key("p", "paused"))).toBe(0);
    const resumedAt = Date.now();
    await queue.resume();
    expect(await queue.isPaused()).toBe(false);
    expect(await bull.isPaused()).toBe(false);
    const all = await started(3);
    expect(all.map((s) => s.name)).toEqual(["a", "c", "b"]);
    expect((all[0]?.startedAt ?? 0) - resumedAt).toBeLessThan(100);
    await waitFor(() => log.some((e) => e.event === "resumed"), "the resumed event");
    expect(log.filter((e) => e.event === "paused" || e.event === "resumed")).toEqual([
      { event: "paused" },
      { event: "resumed" },
    ]);
  });

  it("agrees with BullMQ's pause and resume in both directions", async () => {
    const io = peers();
    const queue = io.queue("p");
    const bull = io.bullQueue("p");
    await bull.pause();
    expect(await queue.isPaused()).toBe(true);
    await queue.add("while-bull-paused", {});
    const { started, seen } = io.worker("p");
    await sleep(400);
    expect(seen).toEqual([]);
    await queue.resume();
    expect(await bull.isPaused()).toBe(false);
    await started(1);
    await queue.pause();
    expect(await bull.isPaused()).toBe(true);
    await queue.add("while-nimbusq-paused", {});
    await sleep(300);
    expect(seen).toHaveLength(1);
    await bull.resume();
    expect(await queue.isPaused()).toBe(false);
    const all = await started(2);
    expect(all.map((s) => s.name)).toEqual(["while-bull-paused", "while-nimbusq-paused"]);
  });
});

/**
 * The peers' Redis port, running `hook` after each script call that ran (before its reply is used):
 * an EVALSHA, or the EVAL that follows one answered NOSCRIPT (a server, or cluster master, that has
 * not seen the script yet: the first test of a file to use it, or the first on its master).
 */
function afterEachScript(io: Interop, hook: () => Promise<void>): RedisPort {
  const inner = toRedisPort(io.redis);
  return {
    ...inner,
    evalsha: async (sha, keys, args) => {
      const reply = await inner.evalsha(sha, keys, args);
      await hook();
      return reply;
    },
    eval: async (script, keys, args) => {
      const reply = await inner.eval(script, keys, args);
      await hook();
      return reply;
    },
  };
}

describe("a legacy (5.x) paused list", () => {
  it("moves into wait in bounded calls on resume, oldest first in line, the queue paused until all moved", async () => {
    const io = peers();
    const bull = io.bullQueue("legacy");
    const ids = Array.from({ length: 100_001 }, (_, i) => `p${i}`);
    // 5.x LPUSHed onto paused, so its oldest job (p0) is at the right end.
    for (let from = 0; from < ids.length; from += 10_000) {
      await io.raw.lpush(io.key("legacy", "paused"), ...ids.slice(from, from + 10_000));
    }
    await io.raw.lpush(io.key("legacy", "wait"), "w0", "w1");
    await io.raw.hset(io.key("legacy", "meta"), "paused", "1");
    const pausedAfterCall: boolean[] = [];
    const watched = afterEachScript(io, async () => {
      pausedAfterCall.push((await io.raw.hexists(io.key("legacy", "meta"), "paused")) === 1);
    });
    await new Queue("legacy", { redis: watched, prefix: io.prefix }).resume();
    // 20,000 entries a call: five calls leave the queue paused, the sixth moves the rest and resumes.
    expect(pausedAfterCall).toEqual([true, true, true, true, true, false]);
    expect(await io.raw.exists(io.key("legacy", "paused"))).toBe(0);
    expect(await io.raw.llen(io.key("legacy", "wait"))).toBe(100_003);
    expect(await io.raw.lrange(io.key("legacy", "wait"), 0, 2)).toEqual(["w1", "w0", "p100000"]);
    expect(await io.raw.lrange(io.key("legacy", "wait"), 39_998, 40_003)).toEqual([
      "p60004",
      "p60003",
      "p60002",
      "p60001",
      "p60000",
      "p59999",
    ]);
    expect(await io.raw.lrange(io.key("legacy", "wait"), -3, -1)).toEqual(["p2", "p1", "p0"]);
    expect(await bull.isPaused()).toBe(false);
    const events = await io.raw.xrange(io.key("legacy", "events"), "-", "+");
    expect(events.map(([, fields]) => fields[1])).toEqual(["resumed"]);
  });
});

describe("a legacy (5.x) paused list, paused again half-way", () => {
  it("stays paused when a pause comes between two calls of a resume, and a later resume finishes", async () => {
    const io = peers();
    const paused = io.key("legacy", "paused");
    const ids = Array.from({ length: 50_000 }, (_, i) => `p${i}`);
    for (let from = 0; from < ids.length; from += 10_000)
      await io.raw.lpush(paused, ...ids.slice(from, from + 10_000));
    await io.raw.lpush(io.key("legacy", "wait"), "w0");
    await io.raw.hset(io.key("legacy", "meta"), "paused", "1");
    const other = io.queue("legacy");
    let calls = 0;
    const interrupted = afterEachScript(io, async () => {
      // After the first call moved 20,000 entries, somebody pauses the queue.
      if (++calls === 1) await other.pause();
    });
    await new Queue("legacy", { redis: interrupted, prefix: io.prefix }).resume();
    // The resume's second call found the move ended by the pause, and stopped.
    expect(calls).toBe(2);
    expect(await other.isPaused()).toBe(true);
    expect(await io.raw.llen(paused)).toBe(30_000);
    expect(await io.raw.hexists(io.key("legacy", "meta"), "nq:resuming")).toBe(0);
    const events = async () =>
      (await io.raw.xrange(io.key("legacy", "events"), "-", "+")).map(([, fields]) => fields[1]);
    expect(await events()).toEqual([]);
    await other.resume();
    expect(await other.isPaused()).toBe(false);
    expect(await io.raw.exists(paused)).toBe(0);
    expect(await io.raw.lrange(io.key("legacy", "wait"), -2, -1)).toEqual(["p1", "p0"]);
    expect(await io.raw.llen(io.key("legacy", "wait"))).toBe(50_001);
    expect(await events()).toEqual(["resumed"]);
  });
});

describe("job.remove()", () => {
  it("is refused while a BullMQ worker holds the job, and works once it let go", async () => {
    const io = peers();
    const queue = io.queue("r");
    const bull = io.bullQueue("r");
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { started, worker } = io.worker("r", () => held);
    const job = await queue.add("held", { n: 1 });
    await started(1);
    await expect(job.remove()).rejects.toBeInstanceOf(JobLockedError);
    expect(await job.getState()).toBe("active");
    expect(await bull.getJob(job.id)).toBeDefined();
    release();
    await waitFor(async () => (await job.getState()) === "completed", "completion");
    await job.remove();
    expect(await bull.getJob(job.id)).toBeUndefined();
    expect(await queue.getJob(job.id)).toBeUndefined();
    expect(await job.getState()).toBe("unknown");
    expect(await bull.getJobState(job.id)).toBe("unknown");
    await worker.close();
  });

  it("takes waiting jobs out from the end of wait nearer their time, the rest left in order", async () => {
    const io = peers();
    const queue = io.queue("w");
    const bull = io.bullQueue("w");
    const base = Date.now() - 60_000;
    const jobs = [];
    for (let i = 0; i < 9; i++) jobs.push(await queue.add(`j${i}`, {}, { timestamp: base + i * 1000 }));
    // A lifo job jumps to the right end although its time is the newest: the guess is wrong, the
    // walk longer, the job goes all the same.
    const lifo = await queue.add("lifo", {}, { lifo: true, timestamp: base + 100_000 });
    const ids = jobs.map((job) => job.id);
    for (const job of [jobs[8], jobs[0], jobs[4], lifo]) await job?.remove();
    const wait = io.key("w", "wait");
    expect(await io.raw.lrange(wait, 0, -1)).toEqual([7, 6, 5, 3, 2, 1].map((i) => ids[i]));
    expect((await bull.getWaiting()).map((job) => job.name)).toEqual(["j1", "j2", "j3", "j5", "j6", "j7"]);
    // The direction shows with an id planted twice, one entry in from the far end: the newest job's
    // left copy goes, then the oldest job's right one. (No path pushes an id twice; the copy left
    // behind here is the planted one's twin.)
    await io.raw.linsert(wait, "BEFORE", ids[1] as string, ids[7] as string);
    await jobs[7]?.remove();
    expect(await io.raw.lrange(wait, 0, -1)).toEqual([6, 5, 3, 2, 7, 1].map((i) => ids[i]));
    await io.raw.linsert(wait, "AFTER", ids[6] as string, ids[1] as string);
    await jobs[1]?.remove();
    expect(await io.raw.lrange(wait, 0, -1)).toEqual([6, 1, 5, 3, 2, 7].map((i) => ids[i]));
    const events = await io.raw.xrange(io.key("w", "events"), "-", "+");
    const removed = events.filter(([, fields]) => fields[1] === "removed").map(([, fields]) => fields);
    expect(removed).toHaveLength(6);
    for (const fields of removed) expect(fields.slice(4)).toEqual(["prev", "wait"]);
  });

  it("removes jobs in every state as BullMQ does, releasing a parent whose last child goes", async () => {
    const base = Date.now();
    const after: Record<string, unknown>[] = [];
    for (const which of ["nimbusq", "bullmq"] as const) {
      const io = peers(which);
      const p = producer(io, which);
      await p.add("r", "done", {});
      await p.add("r", "broken", {});
      const { started } = io.worker("r", (job) => {
        if (job.name === "broken") throw new Error("broken");
        return "done";
      });
      await started(2);
      await waitFor(
        async () => (await io.bullQueue("r").getJobCounts("completed", "failed")).failed === 1,
        "finish",
      );
      await io.bullQueue("r").pause();
      await p.add("r", "waiting", {});
      await p.add("r", "delayed", {}, { delay: 60_000, timestamp: base });
      await p.add("r", "prio", {}, { priority: 2 });
      await p.add("r", "owner", {}, { deduplication: { id: "o" } });
      await p.flow({
        name: "parent",
        queueName: "r",
        opts: { jobId: "P", priority: 5, delay: 1000 },
        children: [{ name: "kid", queueName: "kids", opts: { jobId: "K" } }],
      });
      for (const id of ["1", "2", "3", "4", "5", "6"]) await p.remove("r", id);
      await p.remove("kids", "K");
      await p.add("r", "owner-again", {}, { deduplication: { id: "o" } });
      after.push(await snapshot(io));
    }
    expect(after[0]).toEqual(after[1]);
    expect(after[0]).toMatchObject({
      counts: { completed: 0, failed: 0, delayed: 0, prioritized: 0, waiting: 2, "waiting-children": 0 },
      P: "waiting",
      wait: ["8", "P"],
      dedup: "8",
      gone: [undefined, undefined, undefined, undefined, undefined, undefined, undefined],
    });
  });
});

async function snapshot(io: Interop): Promise<Record<string, unknown>> {
  const bull = io.bullQueue("r");
  const gone = [];
  for (const id of ["1", "2", "3", "4", "5", "6"]) gone.push(await bull.getJob(id));
  gone.push(await io.bullQueue("kids").getJob("K"));
  return {
    counts: await bull.getJobCounts(),
    P: await bull.getJobState("P"),
    wait: await io.raw.lrange(io.key("r", "wait"), 0, -1),
    dedup: await io.raw.get(io.key("r", "de:o")),
    gone,
  };
}
