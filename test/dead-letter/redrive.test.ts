/**
 * Redrive moves dead letters back to their source queue as new jobs (original name, data, opts, fresh
 * attempts), each leaving the dead-letter queue in the same call: nothing lost, nothing doubled, even
 * when answers are lost and calls replayed, or two redrives race.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JobsOptions, Queue, Worker } from "../../core/index.ts";
import {
  keysUnder,
  otherPrefix,
  overRest,
  type PrivateStack,
  startPrivateStack,
  uniquePrefix,
} from "../support/stack.ts";
import { misplacedJobs } from "../support/state-walk.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

/** Adds `n` jobs to `queue` that fail once for good into `dlq`, and fails them. */
async function deadLetters(prefix: string, n: number, opts: JobsOptions = {}, queue = "q", dlq = "q-dlq") {
  const source = new Queue(queue, { redis: stack.redis, prefix });
  const jobs = await source.addBulk(
    Array.from({ length: n }, (_, i) => ({
      name: `job-${i}`,
      data: { i },
      opts: { deadLetter: { queue: dlq }, ...opts },
    })),
  );
  const worker = new Worker(
    queue,
    async () => {
      throw new Error("broken");
    },
    { redis: stack.redis, prefix, batchSize: 100 },
  );
  await worker.drain();
  return { source, jobs };
}

async function eventsOf(key: string): Promise<string[][]> {
  return (await stack.direct.xrange(key, "-", "+")).map(([, fields]) => fields);
}

describe("redrive", () => {
  it("turns each dead letter back into a new job of its source queue, and removes it", async () => {
    const prefix = uniquePrefix();
    const opts: JobsOptions = {
      attempts: 2,
      backoff: 10,
      jobId: "custom",
      delay: 5,
      removeOnComplete: true,
      keepLogs: 3,
    };
    const { source, jobs } = await deadLetters(prefix, 1, opts);
    await new Promise((r) => setTimeout(r, 30));
    await new Worker("q", async () => Promise.reject(new Error("broken")), {
      redis: stack.redis,
      prefix,
    }).drain();
    expect(await stack.direct.lrange(`${prefix}:q-dlq:wait`, 0, -1)).toEqual(["dl:q:custom"]);
    const result = await source.redrive();
    expect(result).toEqual({ count: 1, jobs: [{ id: "2", deadLetterId: "dl:q:custom" }], more: false });
    expect(await stack.direct.exists(`${prefix}:q-dlq:dl:q:custom`)).toBe(0);
    expect(await stack.direct.llen(`${prefix}:q-dlq:wait`)).toBe(0);
    const hash = await stack.direct.hgetall(`${prefix}:q:2`);
    expect(hash).toEqual({
      name: "job-0",
      data: '{"i":0}',
      opts: hash.opts,
      timestamp: hash.timestamp,
      delay: "0",
      priority: "0",
    });
    expect(JSON.parse(hash.opts ?? "")).toEqual({
      attempts: 2,
      backoff: { type: "fixed", delay: 10 },
      removeOnComplete: true,
      kl: 3,
      deadLetter: { queue: "q-dlq" },
    });
    expect(await stack.direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["2"]);
    expect(await stack.direct.zrange(`${prefix}:q:failed`, 0, -1)).toEqual([jobs[0]?.id]);
    expect((await eventsOf(`${prefix}:q-dlq:events`)).at(-1)).toEqual([
      "event",
      "removed",
      "jobId",
      "dl:q:custom",
      "prev",
      "wait",
    ]);
    expect((await eventsOf(`${prefix}:q:events`)).slice(-2)).toEqual([
      ["event", "added", "jobId", "2", "name", "job-0"],
      ["event", "waiting", "jobId", "2"],
    ]);
    expect(await stack.direct.zscore(`${prefix}:q:marker`, "0")).toBe("0");
    // Fresh attempts: it runs again, and a success is a success.
    const summary = await new Worker("q", async (job) => job.attemptsMade, {
      redis: stack.redis,
      prefix,
    }).drain();
    expect(summary.completed).toBe(1);
  });

  it("drops the letter of a job retried since it failed: retry then redrive runs the job once", async () => {
    const prefix = uniquePrefix();
    const { source, jobs } = await deadLetters(prefix, 2);
    // Job 1 is retried from failed; job 2 stays failed.
    await (await source.getJob(jobs[0]?.id as string))?.retry("failed");
    const result = await source.redrive();
    expect(result.jobs.map((j) => j.deadLetterId)).toEqual([`dl:q:${jobs[1]?.id}`]);
    expect(await stack.direct.llen(`${prefix}:q-dlq:wait`)).toBe(0);
    expect(await stack.direct.exists(`${prefix}:q-dlq:dl:q:${jobs[0]?.id}`)).toBe(0);
    const runs: string[] = [];
    await new Worker("q", async (job) => runs.push(job.name), { redis: stack.redis, prefix }).drain();
    // The retried job once, and the redriven copy of the other: no job's work twice.
    expect(runs.sort()).toEqual(["job-0", "job-1"]);
  });

  it("keeps priority and lifo, takes only its own queue's letters, and stops at count", async () => {
    const prefix = uniquePrefix();
    const { source } = await deadLetters(prefix, 3, { priority: 7 });
    await deadLetters(prefix, 2, {}, "other", "q-dlq");
    const { source: lifoSource } = await deadLetters(prefix, 1, { lifo: true }, "l", "l-dlq");
    expect(await stack.direct.llen(`${prefix}:q-dlq:wait`)).toBe(5);

    const first = await source.redrive({ count: 2 });
    expect(first.count).toBe(2);
    expect(first.more).toBe(true);
    const second = await source.redrive({ count: 2 });
    expect(second).toMatchObject({ count: 1, more: false });
    expect(await source.redrive()).toEqual({ count: 0, jobs: [], more: false });
    expect(await stack.direct.zcard(`${prefix}:q:prioritized`)).toBe(3);
    const left = await stack.direct.lrange(`${prefix}:q-dlq:wait`, 0, -1);
    expect(left.every((id) => id.startsWith("dl:other:"))).toBe(true);
    expect(left).toHaveLength(2);
    // Oldest first: the first letters made are the first redriven.
    expect([...first.jobs, ...second.jobs].map((j) => j.deadLetterId)).toEqual([
      "dl:q:1",
      "dl:q:2",
      "dl:q:3",
    ]);

    await lifoSource.add("waiting", {});
    await lifoSource.redrive({ from: "l-dlq" });
    // The redriven lifo job (3) goes to the head of the line, the right end, ahead of job 2.
    expect(await stack.direct.lrange(`${prefix}:l:wait`, 0, -1)).toEqual(["2", "3"]);
  });

  it("takes letters a dead-letter worker finished (failed or completed), never an active one", async () => {
    const prefix = uniquePrefix();
    const { source } = await deadLetters(prefix, 4);
    const handled: string[] = [];
    const dlqWorker = new Worker(
      "q-dlq",
      async (job) => {
        handled.push(job.id);
        if (handled.length === 1) throw new Error("alert failed");
        if (handled.length === 2) return "alerted";
        // The third is redriven while its dead-letter worker still holds it.
        const during = await source.redrive();
        expect(during.jobs.map((j) => j.deadLetterId).sort()).toEqual(
          handled.slice(0, 2).concat("dl:q:4").sort(),
        );
        return "late";
      },
      { redis: stack.redis, prefix, batchSize: 1 },
    );
    dlqWorker.on("error", () => {});
    await dlqWorker.drain();
    expect(handled.slice(0, 3)).toEqual(["dl:q:1", "dl:q:2", "dl:q:3"]);
    // dl:q:3 was active during the redrive: it stayed, and finished afterwards.
    expect(await stack.direct.zrange(`${prefix}:q-dlq:completed`, 0, -1)).toEqual(["dl:q:3"]);
    expect(await stack.direct.zcard(`${prefix}:q-dlq:failed`)).toBe(0);
    const removed = (await eventsOf(`${prefix}:q-dlq:events`)).filter((f) => f[1] === "removed");
    expect(removed.map((f) => `${f[3]}@${f[5]}`).sort()).toEqual([
      "dl:q:1@failed",
      "dl:q:2@completed",
      "dl:q:4@wait",
    ]);
    expect(await stack.direct.llen(`${prefix}:q:wait`)).toBe(3);
  });

  it("loses and doubles nothing when every other answer is lost, or when two redrives race", async () => {
    const prefix = uniquePrefix();
    const { source } = await deadLetters(prefix, 250);
    const failed = await stack.direct.zrange(`${prefix}:q:failed`, 0, -1);
    const firedBefore = stack.faultsFired() ?? 0;
    stack.setFault({ kind: "drop-after", command: "evalsha", every: 2 });
    let result: Awaited<ReturnType<typeof source.redrive>>;
    try {
      result = await source.redrive({ count: 120 });
    } finally {
      stack.setFault(null);
    }
    expect(result.count).toBe(120);
    // Over TCP the proxies count what they did (over REST its server does not).
    if (!overRest()) expect(Number(stack.faultsFired()) - firedBefore).toBeGreaterThan(0);
    expect(new Set(result.jobs.map((j) => j.id)).size).toBe(120);
    const [a, b] = await Promise.all([source.redrive(), source.redrive()]);
    expect((a?.count ?? 0) + (b?.count ?? 0)).toBe(130);
    const all = [...result.jobs, ...(a?.jobs ?? []), ...(b?.jobs ?? [])];
    expect(new Set(all.map((j) => j.deadLetterId)).size).toBe(250);
    expect(new Set(all.map((j) => j.id)).size).toBe(250);
    expect(await stack.direct.llen(`${prefix}:q-dlq:wait`)).toBe(0);
    const letters = await keysUnder(stack.direct, `${prefix}:q-dlq:dl`);
    expect(letters).toEqual([]);
    const wait = await stack.direct.lrange(`${prefix}:q:wait`, 0, -1);
    expect(wait.sort()).toEqual(all.map((j) => j.id).sort());
    expect(await misplacedJobs(stack.direct, `${prefix}:q`, [...wait, ...failed])).toEqual([]);
    const added = (await eventsOf(`${prefix}:q:events`)).filter(
      (f) => f[1] === "added" && f[5] !== undefined,
    );
    expect(added.filter((f) => wait.includes(f[3] as string))).toHaveLength(250);
    const removed = (await eventsOf(`${prefix}:q-dlq:events`)).filter((f) => f[1] === "removed");
    expect(removed).toHaveLength(250);
    // Every redriven job carries its original data.
    const data = await Promise.all(wait.map((id) => stack.direct.hget(`${prefix}:q:${id}`, "data")));
    expect(new Set(data).size).toBe(250);
  });

  // Billed commands are the REST server's count.
  it.skipIf(!overRest())(
    "costs about 8 billed commands per letter, in 2 requests per 100 letters",
    async () => {
      const prefix = uniquePrefix();
      const { source } = await deadLetters(prefix, 100);
      stack.rest.resetStats();
      const result = await source.redrive();
      const { billed, requests } = stack.rest.stats();
      console.log(`redrive of 100 dead letters: ${billed} billed commands, ${requests} requests`);
      expect(result.count).toBe(100);
      // With the check that each letter's failed job is still failed (ZSCORE), not retried since.
      expect(billed / 100).toBeLessThanOrEqual(8.5);
      expect(requests).toBeLessThanOrEqual(7);
    },
  );

  it("reads another prefix's dead-letter queue when told, and refuses its own queue", async () => {
    const prefix = uniquePrefix();
    const other = otherPrefix(prefix);
    await deadLetters(prefix, 2, { deadLetter: { queue: "dead", prefix: other } });
    const source = new Queue("q", { redis: stack.redis, prefix });
    expect((await source.redrive({ from: "dead" })).count).toBe(0);
    expect((await source.redrive({ from: "dead", prefix: other })).count).toBe(2);
    await expect(source.redrive({ from: "q" })).rejects.toThrow(/from must be another queue/);
    await expect(source.redrive({ count: 0 })).rejects.toThrow(/count/);
    await expect(source.redrive({ from: "a:b" })).rejects.toThrow(/from/);
  });
});
