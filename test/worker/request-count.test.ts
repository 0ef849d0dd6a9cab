/**
 * What a job costs at steady state, counted by the REST server (requests and billed commands), with
 * every BullMQ event written: a backlog of 2,000 jobs, a no-op processor, batchSize 50 and
 * concurrency 50, one `drain()`. The scripts are loaded before counting (a warm-up job), as the
 * benchmark does. Counted twice: the processing alone (stats reset after the adds), and the whole
 * lifecycle (add + processing), which is how the benchmark's "billed commands per job" is counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue, Worker } from "../../core/index.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { misplacedJobs } from "../support/state-walk.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack?.stop());

const total = 2000;

/** Adds `total` no-op jobs in bulk; returns their ids. */
async function backlog(queue: Queue): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < total; from += 1000) {
    const added = await queue.addBulk(
      Array.from({ length: 1000 }, (_, i) => ({ name: "noop", data: { n: from + i } })),
    );
    ids.push(...added.map((job) => job.id));
  }
  return ids;
}

/** A worker and queue on a fresh prefix, with every script loaded by a warm-up job. */
async function warmSetup() {
  const prefix = uniquePrefix("count");
  const queue = new Queue("q", { redis: stack.redis, prefix });
  const worker = new Worker("q", async () => undefined, {
    redis: stack.redis,
    prefix,
    batchSize: 50,
    concurrency: 50,
  });
  const warm = await queue.add("warm", {});
  expect(await worker.drain()).toMatchObject({ completed: 1 });
  return { prefix, qp: `${prefix}:q`, queue, worker, warmId: warm.id };
}

/** Checks that every job (the warm-up one too) completed once, each with its completed event. */
async function expectAllCompleted(qp: string, ids: string[], warmId: string): Promise<void> {
  expect(await stack.direct.zcard(`${qp}:completed`)).toBe(total + 1);
  expect(await misplacedJobs(stack.direct, qp, [warmId, ...ids])).toEqual([]);
  // All events written: one completed event per job (the stream's cap of ~10,000 is not reached).
  const completedInStream = (await stack.direct.xrange(`${qp}:events`, "-", "+")).filter(
    ([, fields]) => fields[1] === "completed",
  ).length;
  expect(completedInStream).toBe(total + 1);
}

function describeStats(stats: ReturnType<PrivateStack["rest"]["stats"]>): string {
  return (
    `${stats.requests} requests (${(stats.requests / total).toFixed(4)}/job), ` +
    `${stats.billed} billed commands (${(stats.billed / total).toFixed(3)}/job), by command ${JSON.stringify(stats.byCommand)}`
  );
}

describe("requests and billed commands per job at steady state", () => {
  it("processing 2,000 no-op jobs, batchSize 50, concurrency 50: ≤ 0.05 requests and ≤ 10 billed commands per job", async () => {
    const { qp, queue, worker, warmId } = await warmSetup();
    const ids = await backlog(queue);
    expect(await stack.direct.llen(`${qp}:wait`)).toBe(total);
    let completedEvents = 0;
    worker.on("completed", () => {
      completedEvents += 1;
    });

    stack.rest.resetStats();
    const summary = await worker.drain();
    const stats = stack.rest.stats();

    expect(summary.completed).toBe(total);
    expect(summary).toMatchObject({ leased: total, failed: 0, lostLeases: 0, stoppedBecause: "empty" });
    expect(completedEvents).toBe(total);
    await expectAllCompleted(qp, ids, warmId);
    const detail = describeStats(stats);
    expect(stats.requests, detail).toBeGreaterThan(0);
    expect(stats.requests / total, `requests per job: ${detail}`).toBeLessThanOrEqual(0.05);
    expect(stats.billed / total, `billed commands per job: ${detail}`).toBeLessThanOrEqual(10);
  }, 60_000);

  it("the whole lifecycle (addBulk + processing) of 2,000 no-op jobs: ≤ 0.05 requests and ≤ 10 billed commands per job", async () => {
    const { qp, queue, worker, warmId } = await warmSetup();
    stack.rest.resetStats();
    const ids = await backlog(queue);
    const summary = await worker.drain();
    const stats = stack.rest.stats();

    expect(summary.completed).toBe(total);
    await expectAllCompleted(qp, ids, warmId);
    const detail = describeStats(stats);
    expect(stats.requests / total, `requests per job: ${detail}`).toBeLessThanOrEqual(0.05);
    expect(stats.billed / total, `billed commands per job: ${detail}`).toBeLessThanOrEqual(10);
  }, 60_000);
});
