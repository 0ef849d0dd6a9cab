/**
 * What groups cost (issue 26, point 4), counted the way Upstash bills (the REST server's counters, every
 * command inside a script): a grouped backlog at concurrency 50 / batchSize 50 costs at most 2 billed
 * commands per job more than the same backlog ungrouped, and a queue whose grouped jobs are done idles
 * at one read a tick, as any other.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue, Worker } from "../../core/index.ts";
import { loopSweeper } from "../support/loop-sweeper.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

/** Billed commands per job to add `count` jobs (1,000 per addBulk) and drain them at c50/b50. */
async function backlogCost(prefix: string, count: number, groups: number): Promise<number> {
  const queue = new Queue("q", { redis: stack.redis, prefix });
  const worker = new Worker("q", async () => undefined, {
    redis: stack.redis,
    prefix,
    batchSize: 50,
    concurrency: 50,
    group: { concurrency: 50 },
  });
  await queue.add("warm", {}, groups > 0 ? { group: { id: "warm" } } : {});
  await worker.drain();
  stack.rest.resetStats();
  for (let from = 0; from < count; from += 1000) {
    await queue.addBulk(
      Array.from({ length: Math.min(1000, count - from) }, (_, i) => ({
        name: "n",
        data: { n: from + i },
        opts: groups > 0 ? { group: { id: `tenant-${(from + i) % groups}` } } : {},
      })),
    );
  }
  const summary = await worker.drain();
  expect(summary.completed).toBe(count);
  return stack.rest.stats().billed / count;
}

describe("the cost of groups", () => {
  it("a grouped backlog at c50/b50 costs at most 2 billed commands per job more than ungrouped", async () => {
    const plain = await backlogCost(uniquePrefix("gcost"), 2000, 0);
    const tenGroups = await backlogCost(uniquePrefix("gcost"), 2000, 10);
    const manyGroups = await backlogCost(uniquePrefix("gcost"), 2000, 200);
    console.log(
      `billed per job at c50/b50: ungrouped ${plain.toFixed(2)}, 10 groups ${tenGroups.toFixed(2)}, 200 groups ${manyGroups.toFixed(2)}`,
    );
    expect(tenGroups - plain).toBeLessThanOrEqual(2);
    expect(manyGroups - plain).toBeLessThanOrEqual(2);
  });

  it("a queue whose grouped jobs are done idles at one read a tick, as one that never had any", async () => {
    const prefix = uniquePrefix("gidle");
    const sweeper = loopSweeper(stack.redis, prefix, [{ name: "q", workerFunction: "q-worker" }]);
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.addBulk(["a", "b", "a"].map((id) => ({ name: "n", data: {}, opts: { group: { id } } })));
    await queue.add("later", {}, { group: { id: "c" }, delay: 200 });
    await sweeper.tick();
    await new Promise((resolve) => setTimeout(resolve, 250));
    await sweeper.tick();
    await new Worker("q", async () => undefined, { redis: stack.redis, prefix }).drain();
    await sweeper.tick();
    stack.rest.resetStats();
    const idle = await sweeper.tick();
    expect({ passes: idle.passes, commands: stack.rest.stats().byCommand }).toEqual({
      passes: 1,
      commands: { zrange: 1 },
    });
    // No key per group is left (the turn counter nq:gc is one per queue).
    expect(await stack.direct.keys(`${prefix}:q:nq:g[:lr]*`)).toEqual([]);
  });
});
