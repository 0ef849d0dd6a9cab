import { describe, expect, it } from "vitest";
import { DelayedError, RateLimitError, UnrecoverableError, WaitingChildrenError } from "../../core/errors.ts";
import { ActiveJob } from "../../core/job/active-job.ts";
import { toRedisPort } from "../../core/redis/redis-port.ts";
import { decide } from "../../core/worker/outcome.ts";

const context = {
  port: toRedisPort({
    evalsha: async () => null,
    eval: async () => null,
    hgetall: async () => [],
  } as never),
  prefix: "bull",
  queueName: "q",
  clock: () => 1_000_000,
};

function job(opts: Record<string, unknown>, fields: Partial<ActiveJob> = {}): ActiveJob {
  const active = new ActiveJob(context, "1", {
    name: "n",
    data: {},
    opts,
    timestamp: 0,
    delay: 0,
    priority: 0,
  });
  active.token = "t:1";
  Object.assign(active, fields);
  return active;
}

const now = 1_000_000;

describe("decide (BullMQ's retry rules)", () => {
  it("attempts: N means N runs in total", () => {
    const failing = { kind: "threw" as const, error: new Error("boom") };
    expect(decide(job({ attempts: 3 }), failing, { now }).result).toBe("retried");
    expect(decide(job({ attempts: 3 }, { attemptsMade: 1 }), failing, { now }).result).toBe("retried");
    const last = decide(job({ attempts: 3 }, { attemptsMade: 2 }), failing, { now });
    expect(last.result).toBe("failed");
    expect(last.entry).toMatchObject({ outcome: "failed", attemptsMade: 3, value: "boom", attempts: 3 });
    for (const attempts of [undefined, 0, 1]) {
      expect(decide(job({ attempts }), failing, { now }).result).toBe("failed");
    }
  });

  it("retries with backoff to delayed at now + wait, without backoff to wait", () => {
    const failing = { kind: "threw" as const, error: new Error("boom") };
    const delayed = decide(job({ attempts: 2, backoff: { type: "fixed", delay: 500 } }), failing, { now });
    expect(delayed.entry).toMatchObject({ outcome: "delayed", due: now + 500, attemptsMade: 1 });
    const immediate = decide(job({ attempts: 2 }), failing, { now });
    expect(immediate.entry).toMatchObject({ outcome: "waiting", attemptsMade: 1 });
  });

  it("fails at once on UnrecoverableError, a deferred failure, or a strategy saying -1", () => {
    expect(
      decide(job({ attempts: 5 }), { kind: "threw", error: new UnrecoverableError("x") }, { now }).result,
    ).toBe("failed");
    expect(
      decide(
        job({ attempts: 5 }, { deferredFailure: "stalled" }),
        { kind: "threw", error: new Error("stalled") },
        { now },
      ).entry,
    ).toMatchObject({ outcome: "failed", deferred: "1" });
    const never = decide(
      job({ attempts: 5, backoff: { type: "never" } }),
      { kind: "threw", error: new Error("x") },
      {
        now,
        backoffStrategies: { never: () => -1 },
      },
    );
    expect(never.result).toBe("failed");
  });

  it("maps removeOnComplete / removeOnFail (job option over worker option)", () => {
    const done = { kind: "returned" as const, value: 1 };
    expect(decide(job({}), done, { now }).entry).toMatchObject({ keepCount: -1, keepAge: 0 });
    expect(decide(job({ removeOnComplete: true }), done, { now }).entry).toMatchObject({ keepCount: 0 });
    expect(decide(job({ removeOnComplete: 5 }), done, { now }).entry).toMatchObject({ keepCount: 5 });
    expect(decide(job({}), done, { now, removeOnComplete: { age: 60, limit: 10 } }).entry).toMatchObject({
      keepCount: -1,
      keepAge: 60,
      keepLimit: 10,
    });
    expect(
      decide(job({ removeOnComplete: false }), done, { now, removeOnComplete: true }).entry,
    ).toMatchObject({ keepCount: -1 });
  });

  it("stores undefined as null, and keeps the newest stack traces up to stackTraceLimit", () => {
    expect(decide(job({}), { kind: "returned", value: undefined }, { now }).entry?.value).toBe("null");
    const error = new Error("third");
    const entry = decide(
      job({ attempts: 5, stackTraceLimit: 2 }, { stacktrace: ["first", "second"] }),
      { kind: "threw", error },
      { now },
    ).entry;
    expect(JSON.parse(entry?.stacktrace ?? "[]")).toEqual(["second", error.stack]);
  });

  it("turns the processor's moves into the right entries", () => {
    const delayedJob = job({ attempts: 2 });
    delayedJob.intent = { kind: "delayed", due: now + 9000 };
    expect(decide(delayedJob, { kind: "threw", error: new DelayedError() }, { now }).entry).toMatchObject({
      outcome: "delayed",
      due: now + 9000,
      attemptsMade: "",
    });
    expect(decide(job({}), { kind: "threw", error: new RateLimitError() }, { now }).entry).toMatchObject({
      outcome: "returned",
    });
    expect(decide(job({}), { kind: "threw", error: new WaitingChildrenError() }, { now })).toEqual({
      entry: undefined,
      result: "waiting-children",
    });
    expect(decide(job({}), { kind: "handed-back" }, { now }).entry).toMatchObject({
      outcome: "returned",
      attemptsMade: "",
    });
  });

  it("reads the parent policy from the job's parent field", () => {
    const child = job(
      {},
      { parentKey: "bull:p:9", parent: { id: "9", queueKey: "bull:p", idof: true } as never },
    );
    expect(decide(child, { kind: "returned", value: 1 }, { now }).entry).toMatchObject({
      parentKey: "bull:p:9",
      parentPrefix: "bull:p:",
      parentPolicy: "idof",
    });
  });
});
