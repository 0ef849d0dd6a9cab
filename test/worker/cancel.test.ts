/**
 * Cancelling a job from anywhere (issue 26, point 3): a waiting job fails at once; a running one is
 * aborted in the process that runs it at that worker's next lease extension, and ends failed with the
 * reason (no retry) unless its processor returns; a BullMQ worker's job is only recorded. Real REST
 * server and redis-server, a nimbusq worker in a child process, real BullMQ.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Worker as BullWorker } from "bullmq";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { JobCancelledError, JobNotFoundError, Queue, ValidationError, Worker } from "../../core/index.ts";
import { expectError, field, makeApi } from "../support/http-app.ts";
import {
  type PrivateStack,
  sharedConnection,
  sharedRedis,
  startPrivateStack,
  uniquePrefix,
} from "../support/stack.ts";
import { leaseBatch } from "../support/worker-calls.ts";

const redis = sharedRedis();
const workerScript = fileURLToPath(new URL("./fixtures/cancel-worker.ts", import.meta.url));

type Message = { type: string; id?: string; at?: number; cancelled?: string };

/** The fixture worker in its own process, and what it told. */
function startChild(
  prefix: string,
): Promise<{ child: ChildProcess; messages: Message[]; stop(): Promise<void> }> {
  const child = fork(workerScript, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, NQ_URL: inject("restUrl"), NQ_TOKEN: inject("restToken"), NQ_PREFIX: prefix },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const messages: Message[] = [];
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.send("stop");
    });
  return new Promise((resolve) => {
    child.on("message", (message: Message) => {
      messages.push(message);
      if (message.type === "ready") resolve({ child, messages, stop });
    });
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("cancelling a job that waits", () => {
  it("fails a waiting, a delayed and a prioritized job at once with the reason, with no retry", async () => {
    const prefix = uniquePrefix("cancel");
    const queue = new Queue("cancel", { redis, prefix });
    const opts = { attempts: 3, removeOnFail: false };
    const waiting = await queue.add("w", {}, opts);
    const delayed = await queue.add("d", {}, { ...opts, delay: 60_000 });
    const prioritized = await queue.add("p", {}, { ...opts, priority: 5 });
    expect(await queue.cancelJob(waiting.id as string, "no longer needed")).toEqual({
      outcome: "cancelled",
      state: "wait",
    });
    expect(await delayed.cancel("too late")).toEqual({ outcome: "cancelled", state: "delayed" });
    expect(await queue.cancelJob(prioritized.id as string)).toEqual({
      outcome: "cancelled",
      state: "prioritized",
    });
    const read = async (id: string) => {
      const job = await queue.getJob(id);
      return { state: await job?.getState(), reason: job?.failedReason, made: job?.attemptsMade };
    };
    expect(await read(waiting.id as string)).toEqual({
      state: "failed",
      reason: "no longer needed",
      made: 0,
    });
    expect(await read(delayed.id as string)).toEqual({ state: "failed", reason: "too late", made: 0 });
    expect(await read(prioritized.id as string)).toEqual({ state: "failed", reason: "cancelled", made: 0 });
    expect(await queue.getJobCounts("wait", "delayed", "prioritized", "failed")).toEqual({
      wait: 0,
      delayed: 0,
      prioritized: 0,
      failed: 3,
    });
    // BullMQ's failed event, its prev the state the job left; no retries-exhausted.
    const events = await sharedConnection().xrange(`${prefix}:cancel:events`, "-", "+");
    const failed = events.map(([, fields]) => fields).filter((fields) => fields[1] === "failed");
    expect(failed.map((fields) => [fields[3], fields[5], fields[7]])).toEqual([
      [waiting.id, "no longer needed", "wait"],
      [delayed.id, "too late", "delayed"],
      [prioritized.id, "cancelled", "prioritized"],
    ]);
    expect(events.some(([, fields]) => fields[1] === "retries-exhausted")).toBe(false);
    // Nothing left for a worker.
    const worker = new Worker("cancel", async () => "ran", { redis, prefix });
    expect((await worker.drain()).leased).toBe(0);
    await queue.close();
  });

  it("answers plainly for a finished or unknown job, and refuses a bad reason naming it", async () => {
    const prefix = uniquePrefix("cancel");
    const queue = new Queue("cancel", { redis, prefix });
    const job = await queue.add("done", {});
    await new Worker("cancel", async () => 42, { redis, prefix }).drain();
    expect(await queue.cancelJob(job.id as string)).toEqual({ outcome: "finished", state: "completed" });
    expect((await queue.getJob(job.id as string))?.returnvalue).toBe(42);
    await expect(queue.cancelJob("nope")).rejects.toThrow(JobNotFoundError);
    await expect(queue.cancelJob(job.id as string, 7 as never)).rejects.toThrow(ValidationError);
    await expect(queue.cancelJob(job.id as string, "x".repeat(1001))).rejects.toThrow(/reason.*at most 1000/);
    await queue.close();
  });

  it("removes a cancelled job at once with removeOnFail: true, and clears its deduplication key", async () => {
    const prefix = uniquePrefix("cancel");
    const queue = new Queue("cancel", { redis, prefix });
    const job = await queue.add("w", {}, { removeOnFail: true, deduplication: { id: "once" } });
    expect((await queue.cancelJob(job.id as string)).outcome).toBe("cancelled");
    expect(await queue.getJob(job.id as string)).toBeUndefined();
    expect(await queue.getDeduplicationJobId("once")).toBeNull();
    await queue.close();
  });
});

describe("cancelling over HTTP", () => {
  it("POST /queues/:queue/jobs/:id/cancel fails a delayed job with the reason; a finished one answers 409", async () => {
    const api = makeApi();
    const queue = new Queue("cancel", { redis, prefix: api.prefix });
    const job = await queue.add("later", {}, { delay: 60_000 });
    const answer = await api.admin("POST", `/queues/cancel/jobs/${job.id}/cancel`, {
      json: { reason: "stop it" },
    });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 200,
      body: { id: job.id, outcome: "cancelled", prev: "delayed" },
    });
    expect((await queue.getJob(job.id as string))?.failedReason).toBe("stop it");
    const again = await api.admin("POST", `/queues/cancel/jobs/${job.id}/cancel`);
    expectError(again, 409, "wrong_state");
    expect(field(again, "error", "message")).toMatch(/is failed: there is nothing to cancel/);
    await queue.close();
  });
});

describe("cancelling a running job", () => {
  it("aborts it in the process that runs it at the next lease extension; the job fails with the reason", async () => {
    const prefix = uniquePrefix("cancel");
    const queue = new Queue("cancel", { redis, prefix });
    const worker = await startChild(prefix);
    try {
      const gives = await queue.add("gives", { kind: "throw-on-abort" }, { attempts: 3 });
      const returns = await queue.add("returns", { kind: "return-on-abort" });
      const others = await queue.addBulk(
        [1, 2].map(() => ({ name: "s", data: { kind: "sleep", ms: 3000 } })),
      );
      const started = (id: string) => worker.messages.some((m) => m.type === "start" && m.id === id);
      await until("all four started", () =>
        [gives, returns, ...others].every((job) => started(job.id as string)),
      );
      const cancelledAt = Date.now();
      expect(await queue.cancelJob(gives.id as string, "user clicked cancel")).toEqual({
        outcome: "signalled",
        state: "active",
      });
      expect((await returns.cancel("stop early")).outcome).toBe("signalled");
      const abort = (id: string) => worker.messages.find((m) => m.type === "aborted" && m.id === id);
      await until(
        "both aborted",
        () => abort(gives.id as string) !== undefined && abort(returns.id as string) !== undefined,
      );
      expect(abort(gives.id as string)?.cancelled).toBe("user clicked cancel");
      // Within one extension period (the lease is 1200 ms: extended when a third old): reported, and
      // before the other jobs of the same lease (3 s each) finished.
      console.log(`cancel → abort: ${(abort(gives.id as string)?.at ?? 0) - cancelledAt} ms`);
      const state = async (id: string) => (await queue.getJob(id))?.getState();
      expect(await Promise.all(others.map((job) => state(job.id as string)))).toEqual(["active", "active"]);
      await until("the cancelled job failed", async () => (await state(gives.id as string)) === "failed");
      const failed = await queue.getJob(gives.id as string);
      expect({ reason: failed?.failedReason, made: failed?.attemptsMade }).toEqual({
        reason: "user clicked cancel",
        made: 1,
      });
      await until("the rest finished", async () =>
        (await Promise.all([returns, ...others].map((job) => state(job.id as string)))).every(
          (s) => s === "completed",
        ),
      );
      // A processor that returns after the abort completes; the others of the lease are untouched.
      expect((await queue.getJob(returns.id as string))?.returnvalue).toBe("partial");
      expect((await queue.getJob(others[0]?.id as string))?.returnvalue).toBe("slept");
      expect(worker.messages.filter((m) => m.type === "start")).toHaveLength(4);
    } finally {
      await worker.stop();
      await queue.close();
    }
  }, 30_000);

  it("fails a cancelled job whose worker died when a nimbusq worker leases it again, without running it", async () => {
    const prefix = uniquePrefix("cancel");
    const queue = new Queue("cancel", { redis, prefix });
    const job = await queue.add("j", {}, { attempts: 5 });
    const dead = new Worker("cancel", async () => "never", { redis, prefix });
    const lease = {
      token: "nq-dead:1",
      count: 1,
      leaseMs: 100,
      limiterMax: 0,
      limiterDuration: 0,
      workerName: "",
    };
    expect((await leaseBatch(dead.context, lease)).jobs).toHaveLength(1);
    expect((await queue.cancelJob(job.id as string, "gone")).outcome).toBe("signalled");
    let runs = 0;
    const survivor = new Worker("cancel", async () => ++runs, { redis, prefix, stalledInterval: 50 });
    expect(await survivor.recoverStalled()).toEqual([]);
    await new Promise((r) => setTimeout(r, 250));
    expect(await survivor.recoverStalled()).toEqual([job.id]);
    const told: unknown[] = [];
    survivor.on("failed", (_job, error) => told.push(error));
    await survivor.drain();
    expect(told).toHaveLength(1);
    expect(told[0]).toBeInstanceOf(JobCancelledError);
    expect((told[0] as JobCancelledError).reason).toBe("gone");
    const read = await queue.getJob(job.id as string);
    expect({ runs, state: await read?.getState(), reason: read?.failedReason }).toEqual({
      runs: 0,
      state: "failed",
      reason: "gone",
    });
    // A retry clears the cancel: the job runs.
    await read?.retry("failed");
    await survivor.drain();
    expect({ runs, state: await (await queue.getJob(job.id as string))?.getState() }).toEqual({
      runs: 1,
      state: "completed",
    });
    await queue.close();
  });

  it("leaves a job a BullMQ worker runs alone (recorded): it ends as that worker ends it", async () => {
    const prefix = uniquePrefix("cancel");
    const queue = new Queue("cancel", { redis, prefix });
    const job = await queue.add("j", {});
    let release = () => {};
    const running = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = false;
    const bull = new BullWorker(
      "cancel",
      async () => {
        started = true;
        await running;
        return "bull";
      },
      { connection: sharedConnection(), prefix },
    );
    try {
      await until("BullMQ started it", () => started);
      expect(await queue.cancelJob(job.id as string, "stop")).toEqual({
        outcome: "recorded",
        state: "active",
      });
      release();
      await until(
        "completed",
        async () => (await (await queue.getJob(job.id as string))?.getState()) === "completed",
      );
      expect((await queue.getJob(job.id as string))?.returnvalue).toBe("bull");
    } finally {
      await bull.close();
      await queue.close();
    }
  });
});

describe("what a cancel costs the jobs that are not cancelled", () => {
  let stack: PrivateStack;
  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(() => stack.stop());

  it("nothing: an extension of three leases bills the same with one of them cancelled", async () => {
    const prefix = uniquePrefix("cancel");
    const queue = new Queue("cancel", { redis: stack.redis, prefix });
    const jobs = await queue.addBulk([1, 2, 3].map((n) => ({ name: "j", data: { n } })));
    const worker = new Worker("cancel", async () => 0, { redis: stack.redis, prefix });
    const lease = {
      token: "nq-w:1",
      count: 3,
      leaseMs: 30_000,
      limiterMax: 0,
      limiterDuration: 0,
      workerName: "",
    };
    const { jobs: leased } = await leaseBatch(worker.context, lease);
    const { extendBatch } = await import("../../core/worker/calls.ts");
    const extend = async () => {
      stack.rest.resetStats();
      const result = await extendBatch(worker.context, leased, 30_000);
      return { billed: stack.rest.stats().billed, cancelled: [...result.cancelled], lost: result.lost.size };
    };
    await extend(); // loads the script
    const plain = await extend();
    await queue.cancelJob(jobs[1]?.id as string, "enough");
    const withCancel = await extend();
    // EVALSHA, MGET, a SET per lock, SREM: 6 either way.
    expect(plain).toEqual({ billed: 6, cancelled: [], lost: 0 });
    expect(withCancel).toEqual({ billed: 6, cancelled: [[jobs[1]?.id, "enough"]], lost: 0 });
    await queue.close();
  });
});
