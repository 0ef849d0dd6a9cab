import { describe, expect, it } from "vitest";
import {
  type ActiveJob,
  DelayedError,
  Queue,
  RateLimitError,
  TimeoutError,
  Worker,
  type WorkerOptions,
} from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function setup(options: Partial<WorkerOptions> = {}) {
  const prefix = uniquePrefix();
  const redis = sharedRedis();
  const queue = new Queue("q", { redis, prefix });
  const worker = (processor: (job: ActiveJob) => Promise<unknown>) =>
    new Worker("q", processor, { redis, prefix, batchSize: 5, ...options });
  const events = async () => (await direct.xrange(`${prefix}:q:events`, "-", "+")).map(([, f]) => f);
  return { prefix, queue, worker, events };
}

describe("inside the processor", () => {
  it("updates progress (with its event), appends logs and replaces data", async () => {
    const { prefix, queue, worker, events } = setup();
    await queue.add("report", { step: 0 }, { keepLogs: 2 });
    const progressSeen: unknown[] = [];
    const w = worker(async (job) => {
      await job.updateProgress(42);
      await job.updateProgress({ stage: "render" });
      for (const line of ["one", "two", "three"]) await job.log(line);
      await job.updateData({ step: 1 });
      return "ok";
    });
    w.on("progress", (_job, progress) => progressSeen.push(progress));
    await w.drain();
    const hash = await direct.hgetall(`${prefix}:q:1`);
    expect(hash).toMatchObject({ progress: '{"stage":"render"}', data: '{"step":1}', returnvalue: '"ok"' });
    expect(await direct.lrange(`${prefix}:q:1:logs`, 0, -1)).toEqual(["two", "three"]);
    expect((await events()).filter((f) => f[1] === "progress")).toEqual([
      ["event", "progress", "jobId", "1", "data", "42"],
      ["event", "progress", "jobId", "1", "data", '{"stage":"render"}'],
    ]);
    expect(progressSeen).toEqual([42, { stage: "render" }]);
  });

  it("moveToDelayed + DelayedError parks the job without using an attempt", async () => {
    const { prefix, queue, worker } = setup();
    await queue.add("later", {}, { attempts: 2 });
    const due = Date.now() + 60_000;
    const summary = await worker(async (job) => {
      await job.moveToDelayed(due);
      throw new DelayedError();
    }).drain();
    expect(summary).toMatchObject({ delayed: 1, failed: 0, retried: 0 });
    expect(await direct.zscore(`${prefix}:q:delayed`, "1")).toBe(String(due * 4096));
    const hash = await direct.hgetall(`${prefix}:q:1`);
    expect(hash.atm).toBeUndefined();
    expect(await direct.zscore(`${prefix}:q:marker`, "1")).toBe(String(due));
  });

  it("rateLimit + RateLimitError puts the job back first in line and stops the drain", async () => {
    const { prefix, queue, worker } = setup({ batchSize: 1 });
    await queue.addBulk([
      { name: "a", data: {} },
      { name: "b", data: {} },
    ]);
    let calls = 0;
    const w = worker(async () => {
      calls += 1;
      await w.rateLimit(5000);
      throw new RateLimitError();
    });
    const summary = await w.drain();
    expect(summary.stoppedBecause).toBe("rate-limited");
    expect(calls).toBe(1);
    expect(await direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["2", "1"]);
    const again = await w.drain();
    expect(again.stoppedBecause).toBe("rate-limited");
    expect(again.nextDueAt).toBeGreaterThan(Date.now() + 3000);
    expect(await direct.hget(`${prefix}:q:1`, "atm")).toBeNull();
  });

  it("a per-job timeout aborts job.signal and fails the attempt with TimeoutError, then retries", async () => {
    const { prefix, queue, worker } = setup();
    await queue.add("slow", {}, { timeout: 100, attempts: 2 });
    let aborted = 0;
    const failures: Error[] = [];
    const w = worker(
      (job) =>
        new Promise((resolve) => {
          job.signal.addEventListener("abort", () => {
            aborted += 1;
          });
          setTimeout(resolve, 400);
        }),
    );
    w.on("failed", (_job, error) => failures.push(error));
    await w.drain();
    await w.drain();
    expect(aborted).toBe(2);
    expect(failures.map((e) => e.name)).toEqual(["TimeoutError", "TimeoutError"]);
    expect(failures[0]).toBeInstanceOf(TimeoutError);
    const hash = await direct.hgetall(`${prefix}:q:1`);
    expect(hash).toMatchObject({ atm: "2" });
    expect(hash.failedReason).toMatch(/timed out after 100 ms/);
    expect(await direct.zrange(`${prefix}:q:failed`, 0, -1)).toEqual(["1"]);
  });

  it("records a clear outcome for a non-Error throw and an unserializable result, and keeps going", async () => {
    const { prefix, queue, worker } = setup();
    await queue.addBulk([
      { name: "throws-string", data: {} },
      { name: "throws-object", data: {} },
      { name: "bigint", data: {} },
      { name: "fine", data: {} },
    ]);
    await worker(async (job) => {
      if (job.name === "throws-string") throw "plain string";
      if (job.name === "throws-object") throw { code: 7 };
      if (job.name === "bigint") return { n: 1n };
      return "fine";
    }).drain();
    const reasons = await Promise.all(
      [1, 2, 3].map((id) => direct.hget(`${prefix}:q:${id}`, "failedReason")),
    );
    expect(reasons[0]).toBe("the processor threw a non-Error value: plain string");
    expect(reasons[1]).toBe('the processor threw a non-Error value: {"code":7}');
    expect(reasons[2]).toMatch(/return value cannot be stored as JSON/);
    expect(await direct.hget(`${prefix}:q:4`, "returnvalue")).toBe('"fine"');
  });

  it("listeners are notifications: a throwing listener changes no outcome and is reported as error", async () => {
    const { prefix, queue, worker } = setup();
    await queue.add("x", {});
    const errors: Error[] = [];
    const w = worker(async () => "done");
    w.on("completed", () => {
      throw new Error("listener blew up");
    });
    w.on("error", (error) => errors.push(error));
    const summary = await w.drain();
    expect(summary.completed).toBe(1);
    expect(errors.map((e) => e.message)).toEqual(["listener blew up"]);
    expect(await direct.zrange(`${prefix}:q:completed`, 0, -1)).toEqual(["1"]);
  });

  it("emits active, completed, failed and drained with BullMQ's arguments", async () => {
    const { queue, worker } = setup();
    await queue.addBulk([
      { name: "ok", data: {} },
      { name: "bad", data: {} },
    ]);
    const log: string[] = [];
    const w = worker(async (job) => {
      if (job.name === "bad") throw new Error("bad");
      return 5;
    });
    w.on("active", (job, prev) => log.push(`active ${job.id} ${prev}`));
    w.on("completed", (job, result, prev) => log.push(`completed ${job.id} ${String(result)} ${prev}`));
    w.on("failed", (job, error, prev) => log.push(`failed ${job?.id} ${error.message} ${prev}`));
    w.on("drained", () => log.push("drained"));
    await w.drain();
    expect(log).toEqual([
      "active 1 waiting",
      "active 2 waiting",
      "completed 1 5 active",
      "failed 2 bad active",
      "drained",
    ]);
  });

  it("calls the processor with BullMQ 6's (job, token, signal), and listeners see attemptsMade as BullMQ's", async () => {
    const { queue, worker } = setup();
    await queue.add("ok", {});
    await queue.add("flaky", {}, { attempts: 2 });
    const seen: unknown[] = [];
    const w = worker((async (job: ActiveJob, token?: string, signal?: AbortSignal) => {
      seen.push([job.name, token === job.token && typeof token === "string", signal === job.signal]);
      if (job.name === "flaky" && job.attemptsMade === 0) throw new Error("first try");
      return 1;
    }) as (job: ActiveJob) => Promise<unknown>);
    const made: string[] = [];
    w.on("completed", (job) => made.push(`completed ${job.name} ${job.attemptsMade}`));
    w.on("failed", (job) => made.push(`failed ${job?.name} ${job?.attemptsMade}`));
    await w.drain();
    expect(seen).toEqual([
      ["ok", true, true],
      ["flaky", true, true],
      ["flaky", true, true],
    ]);
    expect(made).toEqual(["completed ok 1", "failed flaky 1", "completed flaky 2"]);
  });
});
