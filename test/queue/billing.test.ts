/**
 * Billed Redis commands (how Upstash bills: each command plus each redis.call inside a script), from
 * the REST server's counter on a private redis-server. Counts are deterministic, so they are asserted;
 * BullMQ 6.7.0 needs 9 per job for `add` and for `addBulk` (see test/bench/cost.ts, `npm run bench -- --only cost`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FlowProducer, Queue } from "../../core/index.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

async function billed(action: () => Promise<unknown>): Promise<{ billed: number; requests: number }> {
  stack.rest.resetStats();
  await action();
  const { billed, requests } = stack.rest.stats();
  return { billed, requests };
}

describe("billed commands of adds (script cached)", () => {
  it("add: 10 billed commands in one request, with every BullMQ event and the marker", async () => {
    const queue = new Queue("q", { redis: stack.redis, prefix: uniquePrefix() });
    await queue.add("warm", {});
    expect(await billed(() => queue.add("x", { a: 1 }))).toEqual({ billed: 10, requests: 1 });
  });

  it("addBulk of 100: at most 4 billed commands per job, one request", async () => {
    const queue = new Queue("q", { redis: stack.redis, prefix: uniquePrefix() });
    await queue.add("warm", {});
    const jobs = Array.from({ length: 100 }, (_, n) => ({ name: "b", data: { n } }));
    const cost = await billed(() => queue.addBulk(jobs));
    expect(cost).toEqual({ billed: 307, requests: 1 });
    expect(cost.billed / 100).toBeLessThanOrEqual(4);
  });

  it("a flow of a parent and 10 children is one request", async () => {
    const flow = new FlowProducer({ redis: stack.redis, prefix: uniquePrefix() });
    await flow.add({ name: "warm", queueName: "q" });
    const children = Array.from({ length: 10 }, (_, n) => ({ name: "c", queueName: "q", data: { n } }));
    const cost = await billed(() => flow.add({ name: "p", queueName: "q", children }));
    expect(cost.requests).toBe(1);
    // Per child: hash, added, waiting, parent link; the parent: hash, added, waiting-children; the
    // replay guard read first and written last (a replay must not advance the id counter); the note
    // in the sweeper's attention index.
    expect(cost.billed).toBe(51);
  });
});
