import { describe, expect, it } from "vitest";
import { ValidationError } from "../../core/index.ts";
import { sweeperOptionsFromEnv } from "../../functions/config/sweeper-env.ts";
import { workerKickFromEnv, workersFromEnv } from "../../functions/config/workers-env.ts";

const workers = "email:app-email-worker:10:2, report:app-report-worker";

describe("workersFromEnv", () => {
  it("reads queue:workerFunction[:batchSize[:maxWorkers]] entries", () => {
    expect(workersFromEnv({ NIMBUSQ_WORKERS: workers })).toEqual([
      { name: "email", workerFunction: "app-email-worker", batchSize: 10, maxWorkers: 2 },
      { name: "report", workerFunction: "app-report-worker" },
    ]);
    expect(workersFromEnv({})).toEqual([]);
    expect(workersFromEnv({ NIMBUSQ_WORKERS: "  " })).toEqual([]);
  });

  it.each([
    ["email", "NIMBUSQ_WORKERS[0] must be queue:workerFunction[:batchSize[:maxWorkers]]"],
    ["email:", "NIMBUSQ_WORKERS[0].workerFunction must be a function name"],
    ["email:fn:0", 'NIMBUSQ_WORKERS[0].batchSize must be a positive integer, got "0"'],
    ["email:fn:10:x", 'NIMBUSQ_WORKERS[0].maxWorkers must be a positive integer, got "x"'],
    ["email:fn:1:2:3", "NIMBUSQ_WORKERS[0] must be queue:workerFunction"],
    ["email:fn,email:other", 'NIMBUSQ_WORKERS[1] must be a queue not named before, got "email"'],
    [
      "email:arn:aws:lambda:us-east-1:123456789012:function:fn",
      "not an ARN (put ARNs in NIMBUSQ_SWEEPER_CONFIG)",
    ],
    [":fn", "NIMBUSQ_WORKERS[0]: queueName must be a non-empty string"],
  ])("refuses %j, naming the variable", (value, message) => {
    expect(() => workersFromEnv({ NIMBUSQ_WORKERS: value })).toThrow(ValidationError);
    expect(() => workersFromEnv({ NIMBUSQ_WORKERS: value })).toThrow(message);
  });
});

describe("sweeperOptionsFromEnv", () => {
  it("takes the queues from NIMBUSQ_WORKERS and the other settings from their variables", () => {
    expect(
      sweeperOptionsFromEnv({
        NIMBUSQ_WORKERS: workers,
        NIMBUSQ_EVENT_BUS: "app-bus",
        NIMBUSQ_SWEEPER_MODE: "once",
        NIMBUSQ_PREFIX: "jobs",
      }),
    ).toEqual({
      queues: [
        { name: "email", workerFunction: "app-email-worker", batchSize: 10, maxWorkers: 2 },
        { name: "report", workerFunction: "app-report-worker" },
      ],
      eventBus: "app-bus",
      mode: "once",
      prefix: "jobs",
    });
  });

  it("refuses forwarding events to a bus while NIMBUSQ_EVENTS writes none", () => {
    const env = { NIMBUSQ_WORKERS: workers, NIMBUSQ_EVENT_BUS: "app-bus" };
    expect(() => sweeperOptionsFromEnv({ ...env, NIMBUSQ_EVENTS: "none" })).toThrow(
      /NIMBUSQ_EVENTS must be "all" or "final" while events are forwarded to app-bus/,
    );
    expect(sweeperOptionsFromEnv({ ...env, NIMBUSQ_EVENTS: "final" }).eventBus).toBe("app-bus");
    expect(() => sweeperOptionsFromEnv({ ...env, NIMBUSQ_EVENTS: "loud" })).toThrow(
      /NIMBUSQ_EVENTS must be one of/,
    );
  });

  it("takes everything from NIMBUSQ_SWEEPER_CONFIG, function ARNs included", () => {
    const arn = "arn:aws:lambda:us-east-1:123456789012:function:app-email-worker";
    const config = {
      queues: [{ name: "email", workerFunction: arn, batchSize: 25 }, "audit"],
      eventBus: "app-bus",
      eventSource: "app.queues",
      mode: "loop",
      stalledInterval: 15000,
      maxStalledCount: 0,
    };
    expect(sweeperOptionsFromEnv({ NIMBUSQ_SWEEPER_CONFIG: JSON.stringify(config) })).toEqual({
      ...config,
      queues: [{ name: "email", workerFunction: arn, batchSize: 25 }, { name: "audit" }],
    });
  });

  it.each([
    [{}, 'NIMBUSQ_WORKERS must be set, or "queues" given in NIMBUSQ_SWEEPER_CONFIG'],
    [
      { NIMBUSQ_WORKERS: workers, NIMBUSQ_SWEEPER_CONFIG: '{"queues":["email"]}' },
      'NIMBUSQ_WORKERS must be unset when NIMBUSQ_SWEEPER_CONFIG has "queues"',
    ],
    [
      { NIMBUSQ_SWEEPER_CONFIG: '{"queues":["email"],"eventBus":"a"}', NIMBUSQ_EVENT_BUS: "b" },
      'NIMBUSQ_EVENT_BUS must be unset when NIMBUSQ_SWEEPER_CONFIG has "eventBus"',
    ],
    [
      { NIMBUSQ_WORKERS: workers, NIMBUSQ_SWEEPER_MODE: "forever" },
      'NIMBUSQ_SWEEPER_MODE must be "loop" or "once"',
    ],
    [{ NIMBUSQ_SWEEPER_CONFIG: "{queues:" }, "NIMBUSQ_SWEEPER_CONFIG must be JSON"],
    [
      { NIMBUSQ_SWEEPER_CONFIG: '{"queue":["email"]}' },
      "NIMBUSQ_SWEEPER_CONFIG.queue must be one of the known keys",
    ],
    [{ NIMBUSQ_SWEEPER_CONFIG: '{"queues":"email"}' }, "NIMBUSQ_SWEEPER_CONFIG.queues must be an array"],
    [
      { NIMBUSQ_SWEEPER_CONFIG: '{"queues":[{"name":"email","batchSize":0}]}' },
      "NIMBUSQ_SWEEPER_CONFIG.queues[0].batchSize must be an integer from 1",
    ],
    [
      { NIMBUSQ_SWEEPER_CONFIG: '{"queues":["email"],"tickMs":"60000"}' },
      "NIMBUSQ_SWEEPER_CONFIG.tickMs must be an integer from 1",
    ],
    [
      { NIMBUSQ_SWEEPER_CONFIG: '{"queues":["a:b"]}' },
      'NIMBUSQ_SWEEPER_CONFIG.queues[0]: queueName must be a name without ":"',
    ],
  ])("refuses %j, naming the variable", (env, message) => {
    expect(() => sweeperOptionsFromEnv(env)).toThrow(message);
  });
});

describe("workerKickFromEnv", () => {
  it("invokes the worker function of a listed queue, and nothing for other queues", async () => {
    const calls: [string, unknown][] = [];
    const kick = workerKickFromEnv({ NIMBUSQ_WORKERS: workers }, async (fn, payload) => {
      calls.push([fn, payload]);
    });
    await kick?.("report");
    await kick?.("email", { wakeAt: 1_700_000_000_000 });
    await kick?.("elsewhere");
    expect(calls).toEqual([
      ["app-report-worker", { queue: "report", reason: "http" }],
      ["app-email-worker", { queue: "email", reason: "http", wakeAt: 1_700_000_000_000 }],
    ]);
  });

  it("is undefined when NIMBUSQ_WORKERS is unset", () => {
    expect(workerKickFromEnv({})).toBeUndefined();
  });
});
