/**
 * Leases lapse, workers die, answers get lost: nothing is lost, nothing is counted twice, and a job
 * whose lease is gone is never written by the worker that lost it.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noDeadLetter } from "../../core/dead-letter/dead-letter.ts";
import { Queue, Worker } from "../../core/index.ts";
import type { QueueContext } from "../../core/redis/queue-context.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { misplacedJobs } from "../support/state-walk.ts";
import { ackBatch, leaseBatch } from "../support/worker-calls.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

function context(prefix: string, port: Worker["context"]["port"]): QueueContext {
  return { port, prefix, queueName: "q", clock: Date.now };
}

describe("a worker that dies holding a batch", () => {
  it("loses nothing: its jobs are recovered once the lease lapses, and its late ack is refused", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const added = await queue.addBulk(Array.from({ length: 6 }, (_, n) => ({ name: "n", data: { n } })));
    const survivor = new Worker("q", async (job) => `done ${job.id}`, {
      redis: stack.redis,
      prefix,
      batchSize: 10,
      stalledInterval: 50,
    });
    const dead = await leaseBatch(context(prefix, survivor.context.port), {
      token: "dead-worker:1",
      count: 4,
      leaseMs: 200,
      limiterMax: 0,
      limiterDuration: 0,
      workerName: "",
    });
    expect(dead.jobs).toHaveLength(4);
    expect(await survivor.recoverStalled()).toEqual([]);
    await new Promise((r) => setTimeout(r, 250));
    const recovered = await survivor.recoverStalled();
    expect(recovered.sort()).toEqual(dead.jobs.map((j) => j.id).sort());
    const summary = await survivor.drain();
    expect(summary.completed).toBe(6);
    const lateAck = await ackBatch(
      context(prefix, survivor.context.port),
      dead.jobs.map((job) => ({
        id: job.id,
        token: job.token,
        outcome: "failed" as const,
        value: "late",
        stacktrace: "[]",
        attemptsMade: 9,
        due: 0,
        priority: 0,
        lifo: "",
        keepCount: -1,
        keepAge: 0,
        keepLimit: 0,
        attempts: 0,
        parentKey: "",
        parentPrefix: "",
        parentPolicy: "",
        dedupId: "",
        deferred: "",
        ...noDeadLetter,
      })),
      "dead-worker:1",
    );
    expect(lateAck.codes).toEqual([-2, -2, -2, -2]);
    for (const job of dead.jobs) {
      const hash = await stack.direct.hgetall(`${prefix}:q:${job.id}`);
      expect(hash).toMatchObject({ atm: "1", stc: "1", returnvalue: `"done ${job.id}"` });
      expect(hash.failedReason).toBeUndefined();
    }
    expect(
      await misplacedJobs(
        stack.direct,
        `${prefix}:q`,
        added.map((j) => j.id),
      ),
    ).toEqual([]);
    const stalledEvents = (await stack.direct.xrange(`${prefix}:q:events`, "-", "+")).filter(
      ([, f]) => f[1] === "stalled",
    );
    expect(stalledEvents).toHaveLength(4);
  });

  it("fails a job that stalls more than maxStalledCount times (BullMQ's defa rule)", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.add("stuck", {}, { attempts: 3 });
    const worker = new Worker("q", async () => "never", { redis: stack.redis, prefix, stalledInterval: 20 });
    const loc = context(prefix, worker.context.port);
    for (let round = 0; round < 2; round++) {
      await leaseBatch(loc, {
        token: `dies:${round}`,
        count: 1,
        leaseMs: 100,
        limiterMax: 0,
        limiterDuration: 0,
        workerName: "",
      });
      await worker.recoverStalled();
      await new Promise((r) => setTimeout(r, 130));
      expect(await worker.recoverStalled()).toEqual(["1"]);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(await stack.direct.hget(`${prefix}:q:1`, "defa")).toBe("job stalled more than allowable limit");
    const summary = await worker.drain();
    expect(summary.failed).toBe(1);
    expect(await stack.direct.hget(`${prefix}:q:1`, "failedReason")).toBe(
      "job stalled more than allowable limit",
    );
  });

  it("a lease taken over mid-run is reported lost and the result is not written", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.add("long", {});
    const errors: string[] = [];
    const worker = new Worker(
      "q",
      async () => {
        await stack.direct.set(`${prefix}:q:1:lock`, "someone-else", "PX", 60_000);
        await new Promise((r) => setTimeout(r, 1200));
        return "stale result";
      },
      { redis: stack.redis, prefix, leaseMs: 1000 },
    );
    worker.on("error", (error) => errors.push(error.name));
    const summary = await worker.drain();
    expect(summary).toMatchObject({ completed: 0, lostLeases: 1 });
    expect(errors).toContain("LeaseLostError");
    expect(await stack.direct.hget(`${prefix}:q:1`, "returnvalue")).toBeNull();
    expect(await stack.direct.lrange(`${prefix}:q:active`, 0, -1)).toEqual(["1"]);
  });

  it("a job running longer than its lease keeps it: the lease is extended while it runs", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.add("long", {});
    const worker = new Worker("q", () => new Promise((r) => setTimeout(() => r("slow but fine"), 2500)), {
      redis: stack.redis,
      prefix,
      leaseMs: 1000,
    });
    const summary = await worker.drain();
    expect(summary).toMatchObject({ completed: 1, lostLeases: 0 });
  });
});

describe("lost answers (execute, then drop the response) on lease, extend and ack", () => {
  it("every job ends in exactly one state, attempts are counted once, no event is doubled", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const added = await queue.addBulk(
      Array.from({ length: 60 }, (_, n) => ({
        name: "n",
        data: { n },
        opts: n % 3 === 0 ? { attempts: 2 } : {},
      })),
    );
    const runs = new Map<string, number>();
    const worker = new Worker(
      "q",
      async (job) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 5));
        if ((job.data as { n: number }).n % 3 === 0 && job.attemptsMade === 0)
          throw new Error("first try fails");
        return job.id;
      },
      { redis: stack.redis, prefix, batchSize: 7, concurrency: 3 },
    );
    const firedBefore = stack.faultsFired() ?? 0;
    stack.setFault({ kind: "drop-after", command: "evalsha", every: 2 });
    try {
      for (let round = 0; round < 10 && (await queue.count("waiting", "active")) > 0; round++)
        await worker.drain();
    } finally {
      stack.setFault(null);
    }
    // Over TCP the fault proxies count what they did (the REST server does not).
    const fired = stack.faultsFired();
    if (fired !== undefined) expect(fired - firedBefore).toBeGreaterThan(0);
    const ids = added.map((job) => job.id);
    expect(await misplacedJobs(stack.direct, `${prefix}:q`, ids)).toEqual([]);
    expect(await stack.direct.zcard(`${prefix}:q:completed`)).toBe(60);
    for (const id of ids) {
      const n = Number(id) - 1;
      const hash = await stack.direct.hgetall(`${prefix}:q:${id}`);
      expect(hash.atm).toBe(n % 3 === 0 ? "2" : "1");
      expect(hash.ats).toBe(hash.atm);
    }
    const events = (await stack.direct.xrange(`${prefix}:q:events`, "-", "+")).map(([, f]) => f);
    const completed = events.filter((f) => f[1] === "completed").map((f) => f[3]);
    expect(completed.sort()).toEqual([...ids].sort());
    const actives = events.filter((f) => f[1] === "active").length;
    expect(actives).toBe(60 + 20);
  });
});
