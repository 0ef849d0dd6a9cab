import type { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../core/index.ts";
import { createLambdaInvoker } from "../../functions/aws/lambda-invoker.ts";
import { workerHandler } from "../../functions/worker.ts";
import { lambdaContext } from "../support/aws-events.ts";
import { type AwsRecorder, startAwsRecorder } from "../support/aws-recorder.ts";
import { sharedConnection, sharedRedis, uniquePrefix } from "../support/stack.ts";

let direct: IORedis;
let recorder: AwsRecorder;
beforeAll(async () => {
  direct = sharedConnection();
  recorder = await startAwsRecorder();
});
afterAll(async () => {
  direct.disconnect();
  await recorder.close();
});

const context = (remainingMs: number, functionName = "email-worker") =>
  lambdaContext({ remainingMs, functionName });

describe("workerHandler", () => {
  it("drains the queue and returns the summary", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    await new Queue("email", { redis, prefix }).addBulk(
      [1, 2, 3].map((n) => ({ name: "send", data: { n } })),
    );
    const handler = workerHandler({
      queue: "email",
      prefix,
      redis,
      jobTimeoutMs: 2000,
      processor: async () => "sent",
    });
    const result = await handler({ queue: "email", reason: "sweeper" }, context(10_000));
    expect(result).toMatchObject({ queue: "email", completed: 3, stoppedBecause: "empty", chained: false });
    expect(await direct.zcard(`${prefix}:email:nq:workers`)).toBe(0);
  });

  it("stops before its deadline with work left, hands back unstarted jobs, and re-invokes itself", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    await new Queue("email", { redis, prefix }).addBulk(
      Array.from({ length: 12 }, (_, n) => ({ name: "send", data: { n } })),
    );
    const handler = workerHandler({
      queue: "email",
      prefix,
      redis,
      batchSize: 2,
      concurrency: 1,
      jobTimeoutMs: 300,
      safetyMarginMs: 200,
      processor: () => new Promise((resolve) => setTimeout(() => resolve("sent"), 150)),
      invoke: createLambdaInvoker({ client: recorder.lambdaClient() }),
    });
    const before = recorder.invokes.length;
    const result = await handler({ queue: "email", chain: 2 }, context(1200, "email-worker-fn"));
    expect(result.stoppedBecause).toBe("deadline");
    expect(result.completed).toBeGreaterThan(0);
    expect(result.completed).toBeLessThan(12);
    expect(result.chained).toBe(true);
    expect(recorder.invokes.slice(before)).toEqual([
      {
        functionName: "email-worker-fn",
        invocationType: "Event",
        payload: { queue: "email", reason: "chain", chain: 3 },
      },
    ]);
    expect(await direct.llen(`${prefix}:email:active`)).toBe(0);
    const counts = await new Queue("email", { redis, prefix }).getJobCounts("waiting", "completed");
    expect((counts.waiting ?? 0) + (counts.completed ?? 0)).toBe(12);
  });

  it("never starts a job that could not finish before the deadline, and does not chain then", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    await new Queue("email", { redis, prefix }).add("send", {});
    let runs = 0;
    const handler = workerHandler({
      queue: "email",
      prefix,
      redis,
      jobTimeoutMs: 5000,
      safetyMarginMs: 100,
      processor: async () => {
        runs += 1;
      },
      invoke: createLambdaInvoker({ client: recorder.lambdaClient() }),
    });
    const result = await handler({ queue: "email" }, context(2000));
    expect(result).toMatchObject({ leased: 0, stoppedBecause: "deadline", chained: false });
    expect(runs).toBe(0);
  });

  it("stops a chain after maxChain and refuses an invocation for another queue", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    await new Queue("email", { redis, prefix }).addBulk(
      Array.from({ length: 6 }, () => ({ name: "send", data: {} })),
    );
    const handler = workerHandler({
      queue: "email",
      prefix,
      redis,
      batchSize: 1,
      jobTimeoutMs: 200,
      safetyMarginMs: 100,
      maxChain: 3,
      processor: () => new Promise((resolve) => setTimeout(resolve, 150)),
      invoke: createLambdaInvoker({ client: recorder.lambdaClient() }),
    });
    const result = await handler({ queue: "email", chain: 3 }, context(600));
    expect(result).toMatchObject({ stoppedBecause: "deadline", chained: false });
    await expect(handler({ queue: "reports" }, context(1000))).rejects.toThrow(/invoked for queue "reports"/);
  });
});

describe("workerHandler and delayed jobs", () => {
  it("waits for `wakeAt` (a delayed job added over HTTP) and runs the job on time", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    const job = await new Queue("email", { redis, prefix }).add("later", {}, { delay: 400 });
    const handler = workerHandler({
      queue: "email",
      prefix,
      redis,
      jobTimeoutMs: 1000,
      processor: async () => "ok",
    });
    const result = await handler(
      { queue: "email", reason: "kick", wakeAt: job.timestamp + 400 },
      context(5000),
    );
    expect(result.completed).toBe(1);
    const processedOn = Number(await direct.hget(`${prefix}:email:${job.id}`, "processedOn"));
    expect(processedOn - (job.timestamp + 400)).toBeGreaterThanOrEqual(0);
    expect(processedOn - (job.timestamp + 400)).toBeLessThan(300);
  });

  it("waits out a short retry backoff instead of leaving it to the next sweeper tick", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    await new Queue("email", { redis, prefix }).add(
      "flaky",
      {},
      { attempts: 2, backoff: { type: "fixed", delay: 300 } },
    );
    let runs = 0;
    const handler = workerHandler({
      queue: "email",
      prefix,
      redis,
      jobTimeoutMs: 1000,
      processor: async () => {
        runs += 1;
        if (runs === 1) throw new Error("first try fails");
        return "ok";
      },
    });
    const result = await handler({ queue: "email" }, context(5000));
    expect(result).toMatchObject({ retried: 1, completed: 1, stoppedBecause: "empty" });
    const noWait = workerHandler({
      queue: "email",
      prefix,
      redis,
      jobTimeoutMs: 1000,
      waitForDelayedMs: 0,
      processor: async () => {
        throw new Error("x");
      },
    });
    await new Queue("email", { redis, prefix }).add(
      "flaky2",
      {},
      { attempts: 2, backoff: { type: "fixed", delay: 300 } },
    );
    expect(await noWait({ queue: "email" }, context(5000))).toMatchObject({ retried: 1, completed: 0 });
  });
});
