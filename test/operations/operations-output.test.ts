/**
 * What the functions write for operations: the sweeper's and the worker's CloudWatch EMF lines and
 * JSON log lines (Powertools' shape), read back as CloudWatch would parse them, and what they must
 * never carry (job data, tokens, Redis command arguments). Against the local stack.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, Queue, UnrecoverableError } from "../../core/index.ts";
import { httpHandler } from "../../functions/http/index.ts";
import { requestTimeoutMs } from "../../functions/request-deadline.ts";
import { sweeperHandler } from "../../functions/sweeper.ts";
import { workerHandler } from "../../functions/worker.ts";
import { apiGatewayV2Event, lambdaContext, scheduledEvent } from "../support/aws-events.ts";
import { queueMetricNames } from "../support/emf-names.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

const secretData = "SECRET-DATA-4f1c9";
const apiToken = "tok-OPS-7d3e2b";

type Line = Record<string, unknown> & { _aws?: { Timestamp: number; CloudWatchMetrics: unknown[] } };

function collector() {
  const lines: string[] = [];
  return {
    lines,
    output: (line: string) => lines.push(line),
    parsed: () => lines.map((l) => JSON.parse(l) as Line),
  };
}

/** Checks an EMF document as CloudWatch does: every declared metric has a numeric value. */
function checkEmf(doc: Line, names: string[]): void {
  const aws = doc._aws as {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  expect(typeof aws.Timestamp).toBe("number");
  expect(aws.CloudWatchMetrics).toHaveLength(1);
  const [directive] = aws.CloudWatchMetrics;
  expect(directive?.Namespace).toBe("nimbusq");
  expect(directive?.Dimensions).toEqual([["Queue"]]);
  expect(directive?.Metrics.map((m) => m.Name)).toEqual(names);
  for (const name of names) expect(typeof doc[name], name).toBe("number");
  expect(typeof doc.Queue).toBe("string");
}

const workerMetricNames = [
  "JobsLeased",
  "JobsCompleted",
  "JobsFailed",
  "JobsRetried",
  "LeasesLost",
  "ProcessingMs",
];

describe("worker and sweeper output", () => {
  it("the worker writes one EMF line per invocation and JSON logs; the sweeper one EMF line per queue with the queue's state", async () => {
    const prefix = uniquePrefix("ops");
    const queue = new Queue("email", { redis: stack.redis, prefix });
    await queue.addBulk([
      ...Array.from({ length: 4 }, (_, n) => ({ name: "ok", data: { secretData, n } })),
      { name: "bad", data: { secretData }, opts: { jobId: "bad-1" } },
    ]);
    // The sweeper's first metrics read arms the finish counters the worker calls count into.
    const sweeper = collector();
    const sweep = sweeperHandler({
      queues: ["email"],
      redis: stack.redis,
      prefix,
      mode: "once",
      releaseLock: true,
      metricsEveryPasses: 1,
      output: sweeper.output,
    });
    await sweep(scheduledEvent(), lambdaContext({ functionName: "sweeper" }));
    const worker = collector();
    const handler = workerHandler({
      queue: "email",
      redis: stack.redis,
      prefix,
      jobTimeoutMs: 2000,
      safetyMarginMs: 500,
      deadLetter: { queue: "email-dlq" },
      processor: async (job) => {
        if (job.name === "bad") throw new UnrecoverableError(`refused ${secretData}`);
        return "done";
      },
      output: worker.output,
    });
    const result = await handler(
      { queue: "email" },
      lambdaContext({ remainingMs: 6000, functionName: "email-worker" }),
    );
    expect(result.completed).toBe(4);
    const workerDocs = worker.parsed();
    const emf = workerDocs.filter((d) => d._aws);
    expect(emf).toHaveLength(1);
    checkEmf(emf[0] as Line, workerMetricNames);
    expect(emf[0]).toMatchObject({
      Queue: "email",
      JobsLeased: 5,
      JobsCompleted: 4,
      JobsFailed: 1,
      JobsRetried: 0,
      LeasesLost: 0,
    });
    const logs = workerDocs.filter((d) => !d._aws);
    expect(logs.length).toBeGreaterThan(0);
    for (const log of logs) {
      expect(log).toMatchObject({
        level: expect.any(String),
        message: expect.any(String),
        service: "nimbusq",
        cold_start: true,
        function_name: "email-worker",
        function_request_id: expect.any(String),
        queue: "email",
      });
      expect(Number.isNaN(Date.parse(String(log.timestamp)))).toBe(false);
    }

    // State for the sweeper to report: 2 waiting (one prioritized apart), 1 delayed, paused.
    await queue.addBulk([
      { name: "w", data: { secretData } },
      { name: "w", data: { secretData } },
      { name: "p", data: { secretData }, opts: { priority: 3 } },
      { name: "d", data: { secretData }, opts: { delay: 60_000 } },
    ]);
    await queue.pause();
    await sweep(scheduledEvent(), lambdaContext({ functionName: "sweeper" }));
    const [, line, ...rest] = sweeper.parsed().filter((d) => d._aws);
    expect(rest).toHaveLength(0);
    checkEmf(line as Line, queueMetricNames);
    expect(line).toMatchObject({
      Queue: "email",
      Waiting: 2,
      Prioritized: 1,
      Delayed: 1,
      Active: 0,
      Failed: 1,
      Paused: 1,
      DeadLetterDepth: 1,
      CompletedSinceLastPass: 4,
      FailedSinceLastPass: 1,
      StalledRecovered: 0,
    });
    expect(line?.OldestWaitingAgeSeconds).toBeGreaterThanOrEqual(0);
    expect(line?.OldestWaitingAgeSeconds).toBeLessThan(60);

    // The counters were read and reset: the next pass reports nothing finished since.
    await sweep(scheduledEvent(), lambdaContext({ functionName: "sweeper" }));
    const next = sweeper
      .parsed()
      .filter((d) => d._aws)
      .at(-1);
    expect(next).toMatchObject({ CompletedSinceLastPass: 0, FailedSinceLastPass: 0, Waiting: 2 });

    for (const text of [...worker.lines, ...sweeper.lines]) {
      expect(text).not.toContain(secretData);
      expect(text).not.toContain(stack.rest.token);
    }
  });

  it("metricsEveryPasses: every Nth pass, and 0 writes none (and reads nothing for metrics)", async () => {
    const prefix = uniquePrefix("ops");
    const out = collector();
    const sweep = sweeperHandler({
      queues: ["a", "b"],
      redis: stack.redis,
      prefix,
      mode: "once",
      releaseLock: true,
      metricsEveryPasses: 2,
      output: out.output,
    });
    for (let i = 0; i < 4; i++) await sweep(scheduledEvent(), lambdaContext());
    // Passes 2 and 4 of the container emit (none on its first), one line per queue each.
    expect(
      out
        .parsed()
        .filter((d) => d._aws)
        .map((d) => d.Queue),
    ).toEqual(["a", "b", "a", "b"]);
    const off = collector();
    stack.rest.resetStats();
    await sweeperHandler({
      queues: ["a"],
      redis: stack.redis,
      prefix,
      mode: "once",
      releaseLock: true,
      metricsEveryPasses: 0,
      output: off.output,
    })(scheduledEvent(), lambdaContext());
    expect(off.parsed().filter((d) => d._aws)).toEqual([]);
    // The attention index's read, the sweep (a container's first pass sweeps every queue), the release.
    expect(stack.rest.stats().requests).toBe(3);
  });
});

describe("http function: logs and timeouts", () => {
  it("a failing add logs one JSON line with no job data, no token and no command arguments", async () => {
    const prefix = uniquePrefix("ops");
    await stack.direct.set(`${prefix}:email:wait`, "not a list");
    const lines: string[] = [];
    const { logger } = await import("../../functions/log.ts");
    const original = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (typeof chunk === "string" && chunk.startsWith("{")) lines.push(chunk);
      else return (original as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
      return true;
    }) as typeof process.stdout.write;
    try {
      const handler = httpHandler({ redis: stack.redis, prefix, tokens: [apiToken] });
      const result = await handler(
        apiGatewayV2Event({
          method: "POST",
          path: "/queues/email/jobs",
          headers: { authorization: `Bearer ${apiToken}` },
          body: { name: "welcome", data: { to: secretData } },
        }),
        lambdaContext({ functionName: "http" }),
      );
      expect(result.statusCode).toBe(500);
      void logger;
    } finally {
      process.stdout.write = original;
    }
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] as string) as {
      level: string;
      error: { message: string; code?: string };
    };
    expect(entry).toMatchObject({
      level: "ERROR",
      function_name: "http",
      error: { name: expect.any(String) },
    });
    expect(entry.error).toMatchObject({ code: "WRONGTYPE", script: "addJobs" });
    for (const forbidden of [secretData, apiToken, "command was", "evalsha", stack.rest.token]) {
      expect(lines[0]).not.toContain(forbidden);
    }
  });

  it("a Redis that never answers ends in the app's 500 and its log line, before the invocation's end", async () => {
    const hanging: Server = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const { port } = hanging.address() as AddressInfo;
    const logged: string[] = [];
    try {
      const redis = createRedis({
        url: `http://127.0.0.1:${port}`,
        token: "t",
        timeoutFor: requestTimeoutMs,
      });
      const handler = httpHandler({ redis, tokens: [apiToken], log: (message) => logged.push(message) });
      const started = Date.now();
      const result = await handler(
        apiGatewayV2Event({
          method: "GET",
          path: "/queues/email",
          headers: { authorization: `Bearer ${apiToken}` },
        }),
        lambdaContext({ remainingMs: 2000, functionName: "http" }),
      );
      const took = Date.now() - started;
      expect([500, 503]).toContain(result.statusCode);
      expect(JSON.parse(result.body ?? "{}")).toMatchObject({ error: { code: expect.any(String) } });
      expect(logged).toHaveLength(1);
      // Lambda would end the invocation at 2,000 ms; the app answered with its margin to spare.
      expect(took).toBeLessThan(1900);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });
});
