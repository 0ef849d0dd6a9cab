/**
 * Billed commands and HTTP requests of a full lifecycle (REST server counters, private redis-server).
 * BullMQ 6.7.0 on the same work: 33 billed commands per job, 2 round trips per job (see test/bench).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue, Worker } from "../../core/index.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

describe("cost of a lifecycle", () => {
  it("50 jobs (addBulk, lease, ack, no-op): at most 11 billed commands and 0.1 requests per job", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const worker = new Worker("q", async () => undefined, { redis: stack.redis, prefix, batchSize: 50 });
    await queue.add("warm", {});
    await worker.drain();
    stack.rest.resetStats();
    await queue.addBulk(Array.from({ length: 50 }, (_, n) => ({ name: "n", data: { n } })));
    const summary = await worker.drain();
    const { billed, requests } = stack.rest.stats();
    expect(summary.completed).toBe(50);
    expect(billed / 50).toBeLessThanOrEqual(11);
    expect(requests / 50).toBeLessThanOrEqual(0.1);
    // The add, the worker's first call (lease 50) and one ackAndLease call (ack 50, nothing left; one
    // EXISTS of the finish counters the sweeper's metrics read, which no sweeper has made here).
    expect({ billed, requests }).toEqual({ billed: 484, requests: 3 });
  });

  it("50 jobs failing 3 attempts with backoff: at most a third of BullMQ's 87 billed commands per job", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const worker = new Worker(
      "q",
      async () => {
        throw new Error("always");
      },
      { redis: stack.redis, prefix, batchSize: 50 },
    );
    await queue.add("warm", {});
    await worker.drain();
    stack.rest.resetStats();
    const opts = { attempts: 3, backoff: { type: "fixed", delay: 20 } };
    await queue.addBulk(Array.from({ length: 50 }, (_, n) => ({ name: "n", data: { n }, opts })));
    for (let i = 0; i < 3; i++) {
      await worker.drain();
      await new Promise((r) => setTimeout(r, 40));
    }
    const { billed } = stack.rest.stats();
    expect(await stack.direct.zcard(`${prefix}:q:failed`)).toBe(51);
    expect(billed / 50).toBeLessThanOrEqual(29);
  });
});
