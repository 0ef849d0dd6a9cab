/**
 * The sweeper riding out faults (issue 23, point 4): its calls are retried within the invocation, a
 * pass that still fails is tried again before the tick ends, and the lock is released after a
 * failure. The real loop on the real clock, against a private stack for fault injection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSweeper, Queue } from "../../core/index.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

/** When the job's `waiting` event (its promotion) was written, from its stream id (ms). */
async function promotedAt(prefix: string, jobId: string): Promise<number | undefined> {
  const entries = await stack.direct.xrange(`${prefix}:q:events`, "-", "+");
  for (const [id, fields] of entries) {
    const pairs = Object.fromEntries(fields.flatMap((_, i) => (i % 2 ? [] : [[fields[i], fields[i + 1]]])));
    if (pairs.event === "waiting" && pairs.jobId === jobId && pairs.prev === "delayed")
      return Number(id.split("-")[0]);
  }
  return undefined;
}

describe("the sweeper under faults", () => {
  it("one 503 on its first call: a job due 1 s later is still promoted within a second of its due time", async () => {
    const prefix = uniquePrefix("swf");
    const job = await new Queue("q", { redis: stack.redis, prefix }).add("later", {}, { delay: 1000 });
    const dueAt = job.timestamp + 1000;
    const failures: unknown[] = [];
    const sweeper = createSweeper(
      { queues: ["q"], prefix, tickMs: 4000, marginMs: 500, minPassGapMs: 50 },
      {
        connect: () => stack.redis,
        startWorkers: async () => {},
        failed: (error) => failures.push(error),
      },
    );
    stack.rest.setFault({ kind: "status-503", command: "evalsha", times: 1 });
    try {
      const result = await sweeper.run({ token: crypto.randomUUID(), remainingMs: 3000 });
      expect(result.promoted).toBe(1);
    } finally {
      stack.rest.setFault(null);
    }
    const at = await promotedAt(prefix, job.id);
    expect(at).toBeDefined();
    expect((at as number) - dueAt).toBeLessThan(1000);
    expect(failures).toEqual([]);
  });

  it("a pass failing past the retry window is tried again within the invocation, and the lock released", async () => {
    const prefix = uniquePrefix("swf");
    const job = await new Queue("q", { redis: stack.redis, prefix }).add("later", {}, { delay: 1500 });
    const failures: string[] = [];
    const sweeper = createSweeper(
      { queues: ["q"], prefix, tickMs: 5000, marginMs: 500, minPassGapMs: 50, retry: { windowMs: 200 } },
      {
        connect: () => stack.redis,
        startWorkers: async () => {},
        failed: (error) => failures.push((error as Error).message),
      },
    );
    // Every call refused for 600 ms: the first pass fails after its 200 ms of retries.
    stack.rest.setFault({ kind: "status-500", command: "evalsha" });
    setTimeout(() => stack.rest.setFault(null), 600);
    const result = await sweeper.run({ token: crypto.randomUUID(), remainingMs: 4000 });
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures[0]).toMatch(/^Redis script sweepQueues \(EVALSHA\) .*failed \(transient/);
    expect(result.promoted).toBe(1);
    expect(await promotedAt(prefix, job.id)).toBeDefined();
    // Released at the end after a failure, though the default keeps the lock until the next tick.
    expect(await stack.direct.exists(`${prefix}:nq:sweeper:lock`)).toBe(0);
  });

  it("a 503 on the lock release is retried: the next run takes the lock", async () => {
    const prefix = uniquePrefix("swf");
    await new Queue("q", { redis: stack.redis, prefix }).add("now", {});
    const sweeper = createSweeper(
      { queues: ["q"], prefix, mode: "once", releaseLock: true },
      { connect: () => stack.redis, startWorkers: async () => {} },
    );
    // The sweep passes, the release (the second script call) meets one 503.
    stack.rest.setFault({ kind: "status-503", command: "evalsha", every: 2, times: 1 });
    try {
      expect((await sweeper.run({ token: "first", remainingMs: 60_000 })).locked).toBe(false);
    } finally {
      stack.rest.setFault(null);
    }
    expect((await sweeper.run({ token: "second", remainingMs: 60_000 })).locked).toBe(false);
  });
});
