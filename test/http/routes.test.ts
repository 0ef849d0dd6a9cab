/** Every route of the HTTP API doing its job, through `app.request()`, against the real stack. */
import { Queue as BullQueue } from "bullmq";
import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, Worker } from "../../core/index.ts";
import { field, makeApi } from "../support/http-app.ts";
import { directConnectionForFile, sharedConnectionOptions, sharedRedis } from "../support/stack.ts";

const direct = directConnectionForFile();

describe("POST /queues/:queue/jobs", () => {
  it("adds one job and answers 202 with its id, state and outcome, and where to read it", async () => {
    const { call, prefix } = makeApi();
    const answer = await call("POST", "/queues/email/jobs", {
      json: { name: "welcome", data: { to: "a@example.com" }, opts: { attempts: 3 } },
    });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ id: "1", state: "waiting", outcome: "created" });
    expect(answer.headers.get("location")).toBe("/queues/email/jobs/1");
    expect(await direct.lrange(`${prefix}:email:wait`, 0, -1)).toEqual(["1"]);
    expect(await direct.hgetall(`${prefix}:email:1`)).toMatchObject({
      name: "welcome",
      data: '{"to":"a@example.com"}',
    });
  });

  it("answers each job's state after the add: delayed, prioritized, and looked up for duplicates", async () => {
    const { call } = makeApi({ defaultJobOptions: { attempts: 2 } });
    const answer = await call("POST", "/queues/q/jobs", {
      json: [
        { name: "later", opts: { delay: 60_000 } },
        { name: "urgent", opts: { priority: 5 } },
        { name: "owner", opts: { deduplication: { id: "d" } } },
        { name: "copy", opts: { deduplication: { id: "d" } } },
      ],
    });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({
      jobs: [
        { id: "1", state: "delayed", outcome: "created" },
        { id: "2", state: "prioritized", outcome: "created" },
        { id: "3", state: "waiting", outcome: "created" },
        { id: "3", state: "waiting", outcome: "deduplicated" },
      ],
    });
    const delayed = await call("GET", "/queues/q/jobs/1");
    expect(field(delayed, "opts")).toMatchObject({ attempts: 2, delay: 60_000 });
  });

  it("turns Idempotency-Key into job ids, so a repeated request finds its jobs", async () => {
    const { call, admin, prefix } = makeApi();
    const single = {
      headers: { "idempotency-key": "order-77" },
      json: { name: "charge", data: { cents: 500 } },
    };
    expect((await call("POST", "/queues/q/jobs", single)).body).toMatchObject({
      id: "order-77",
      outcome: "created",
    });
    await admin("POST", "/queues/q/pause");
    expect((await call("POST", "/queues/q/jobs", single)).body).toEqual({
      id: "order-77",
      state: "waiting",
      outcome: "duplicated",
    });
    const batch = { headers: { "idempotency-key": "import-9" }, json: [{ name: "row" }, { name: "row" }] };
    await call("POST", "/queues/q/jobs", batch);
    const again = await call("POST", "/queues/q/jobs", batch);
    expect(field(again, "jobs")).toEqual([
      { id: "import-9-0", state: "waiting", outcome: "duplicated" },
      { id: "import-9-1", state: "waiting", outcome: "duplicated" },
    ]);
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(3);
  });

  it("kicks the queue's worker when jobs became ready, logs a failed kick and still answers 202", async () => {
    const kicked: unknown[] = [];
    let broken = false;
    const { call, logged } = makeApi({
      kick: async (queue, hint) => {
        kicked.push(hint ? [queue, hint] : queue);
        if (broken) throw new Error("Lambda throttled");
      },
    });
    await call("POST", "/queues/mail/jobs", { json: { name: "now" } });
    const before = Date.now();
    await call("POST", "/queues/mail/jobs", { json: { name: "later", opts: { delay: 10_000 } } });
    await call("POST", "/queues/mail/jobs", { json: { name: "much-later", opts: { delay: 3_600_000 } } });
    await call("POST", "/queues/mail/jobs", { json: { name: "again", opts: { jobId: "x" } } });
    await call("POST", "/queues/mail/jobs", { json: { name: "again", opts: { jobId: "x" } } });
    expect(kicked).toEqual(["mail", ["mail", { wakeAt: expect.any(Number) }], "mail"]);
    const wakeAt = (kicked[1] as [string, { wakeAt: number }])[1].wakeAt;
    expect(wakeAt - before).toBeGreaterThanOrEqual(10_000);
    expect(wakeAt - before).toBeLessThan(11_000);
    broken = true;
    expect((await call("POST", "/queues/mail/jobs", { json: { name: "now" } })).status).toBe(202);
    expect(logged.map((entry) => entry.message)).toEqual([expect.stringContaining('queue "mail" failed')]);
  });

  it("kicks for a delayed job due within the sweeper's tick (wakeWithinMs, NIMBUSQ_TICK_MS), not later ones", async () => {
    const kicked: unknown[] = [];
    const { call } = makeApi({
      wakeWithinMs: 5000,
      kick: async (queue, hint) => void kicked.push(hint ? [queue, hint] : queue),
    });
    await call("POST", "/queues/mail/jobs", { json: { name: "soon", opts: { delay: 3000 } } });
    await call("POST", "/queues/mail/jobs", { json: { name: "after-the-tick", opts: { delay: 10_000 } } });
    expect(kicked).toEqual([["mail", { wakeAt: expect.any(Number) }]]);
    expect(() => makeApi({ wakeWithinMs: 10 })).toThrow(/wakeWithinMs/);
  });

  it("adds 1,000 jobs in one request", async () => {
    const { call, prefix } = makeApi();
    const jobs = Array.from({ length: 1000 }, (_, n) => ({ name: "bulk", data: { n } }));
    const answer = await call("POST", "/queues/q/jobs", { json: jobs });
    expect(field<unknown[]>(answer, "jobs")).toHaveLength(1000);
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(1000);
  });
});

describe("reading jobs and queues", () => {
  it("GET /queues/:queue/jobs/:id shows the job with its data, after it ran", async () => {
    const { call, prefix } = makeApi();
    await call("POST", "/queues/q/jobs", { json: { name: "sum", data: { a: 1, b: 2 } } });
    await new Worker(
      "q",
      async (job: ActiveJob<{ a: number; b: number }>) => {
        await job.updateProgress(50);
        return job.data.a + job.data.b;
      },
      { redis: sharedRedis(), prefix },
    ).drain();
    const answer = await call("GET", "/queues/q/jobs/1");
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: "1",
      name: "sum",
      state: "completed",
      progress: 50,
      returnvalue: 3,
      failedReason: null,
      attemptsMade: 1,
      attemptsStarted: 1,
      timestamp: expect.any(Number),
      processedOn: expect.any(Number),
      finishedOn: expect.any(Number),
      delay: 0,
      priority: 0,
      data: { a: 1, b: 2 },
      opts: { attempts: 0 },
    });
  });

  it("GET /queues/:queue answers the counts and whether the queue is paused", async () => {
    const { call, admin } = makeApi();
    await call("POST", "/queues/q/jobs", { json: [{ name: "a" }, { name: "b", opts: { delay: 5000 } }] });
    expect((await call("GET", "/queues/q")).body).toEqual({
      name: "q",
      counts: {
        active: 0,
        completed: 0,
        delayed: 1,
        failed: 0,
        prioritized: 0,
        waiting: 1,
        "waiting-children": 0,
      },
      paused: false,
    });
    expect((await admin("POST", "/queues/q/pause")).body).toEqual({ name: "q", paused: true });
    expect(field(await call("GET", "/queues/q"), "paused")).toBe(true);
  });

  it("GET /queues/:queue/jobs lists one state a page at a time, without data", async () => {
    const { call } = makeApi();
    await call("POST", "/queues/q/jobs", {
      json: [1, 2, 3, 4, 5].map((n) => ({ name: `j${n}`, data: { n } })),
    });
    const newest = await call("GET", "/queues/q/jobs?state=waiting&start=0&end=1");
    expect(newest.status).toBe(200);
    expect(newest.body).toMatchObject({ state: "waiting", start: 0, end: 1, asc: false, total: 5 });
    expect(field<{ id: string }[]>(newest, "jobs").map((job) => job.id)).toEqual(["5", "4"]);
    const oldest = await call("GET", "/queues/q/jobs?state=wait&start=0&end=2&asc=true");
    const jobs = field<Record<string, unknown>[]>(oldest, "jobs");
    expect(jobs.map((job) => [job.id, job.state])).toEqual([
      ["1", "waiting"],
      ["2", "waiting"],
      ["3", "waiting"],
    ]);
    expect(jobs[0]).not.toHaveProperty("data");
    const defaults = await call("GET", "/queues/q/jobs?state=failed");
    expect(defaults.body).toEqual({ state: "failed", start: 0, end: 19, asc: false, total: 0, jobs: [] });
  });
});

describe("admin routes", () => {
  it("pause and resume the queue for every worker, and resume kicks the worker", async () => {
    const kicked: string[] = [];
    const { admin, prefix } = makeApi({ kick: async (queue) => void kicked.push(queue) });
    expect((await admin("POST", "/queues/q/pause")).status).toBe(200);
    expect(await direct.hget(`${prefix}:q:meta`, "paused")).toBe("1");
    expect((await admin("POST", "/queues/q/resume", { json: {} })).body).toEqual({
      name: "q",
      paused: false,
    });
    expect(await direct.hexists(`${prefix}:q:meta`, "paused")).toBe(0);
    expect(kicked).toEqual(["q"]);
  });

  it("retry puts a failed job, or a completed one, back in line", async () => {
    const { call, admin, prefix } = makeApi();
    await call("POST", "/queues/q/jobs", {
      json: [{ name: "bad" }, { name: "good", opts: { priority: 2 } }],
    });
    await new Worker(
      "q",
      async (job) => {
        if (job.name === "bad") throw new Error("boom");
        return "ok";
      },
      { redis: sharedRedis(), prefix },
    ).drain();
    expect((await admin("POST", "/queues/q/jobs/1/retry")).body).toEqual({
      id: "1",
      state: "waiting",
      prev: "failed",
    });
    const completed = await admin("POST", "/queues/q/jobs/2/retry", {
      json: { state: "completed", resetAttemptsMade: true },
    });
    expect(completed.body).toEqual({ id: "2", state: "prioritized", prev: "completed" });
    const job = await call("GET", "/queues/q/jobs/2");
    expect(job.body).toMatchObject({
      state: "prioritized",
      attemptsMade: 0,
      returnvalue: null,
      finishedOn: null,
    });
    const failedAgain = await call("GET", "/queues/q/jobs/1");
    expect(failedAgain.body).toMatchObject({ state: "waiting", attemptsMade: 1, failedReason: null });
  });

  it("DELETE removes a job", async () => {
    const { call, admin, prefix } = makeApi();
    await call("POST", "/queues/q/jobs", { json: { name: "gone" } });
    expect((await admin("DELETE", "/queues/q/jobs/1")).body).toEqual({ id: "1", removed: true });
    expect(await direct.exists(`${prefix}:q:1`)).toBe(0);
    expect((await call("GET", "/queues/q/jobs/1")).status).toBe(404);
  });
});

describe("interop", () => {
  it("a job POSTed over HTTP is what core's and BullMQ's Queue.getJob read", async () => {
    const { call, prefix } = makeApi();
    const posted = await call("POST", "/queues/billing/jobs", {
      headers: { "Idempotency-Key": "invoice-2026-001" },
      json: { name: "invoice", data: { customer: "c-1", lines: [1, 2] }, opts: { attempts: 4, priority: 3 } },
    });
    expect(posted.status).toBe(202);

    const ours = await new Queue("billing", { redis: sharedRedis(), prefix }).getJob("invoice-2026-001");
    expect(ours).toMatchObject({ name: "invoice", data: { customer: "c-1", lines: [1, 2] }, priority: 3 });

    const bull = new BullQueue("billing", { connection: sharedConnectionOptions(), prefix });
    try {
      const theirs = await bull.getJob("invoice-2026-001");
      expect(theirs?.name).toBe("invoice");
      expect(theirs?.data).toEqual({ customer: "c-1", lines: [1, 2] });
      expect(theirs?.opts).toMatchObject({ attempts: 4, priority: 3, jobId: "invoice-2026-001" });
      expect(await theirs?.getState()).toBe("prioritized");
      expect(await bull.getJobCounts("prioritized")).toEqual({ prioritized: 1 });
    } finally {
      await bull.close();
    }
  });
});
