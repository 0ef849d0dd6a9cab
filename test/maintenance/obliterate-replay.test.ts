/**
 * `Queue.obliterate` leaves no key of the queue, not even its replay guards, and stays safe when the
 * REST server runs a step and then loses its answer (the client sends the same step again): the final
 * step, replayed, writes nothing back and answers success. Also what clean and drain leave.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FlowProducer, Queue, Worker } from "../../core/index.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { scanQueue } from "../support/twin-queues.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

/** A queue with jobs in every state, a flow (and a parent elsewhere), a dedup window and a scheduler. */
async function busyQueue(prefix: string, name: string): Promise<Queue> {
  const options = { redis: stack.redis, prefix };
  const queue = new Queue(name, options);
  await queue.addBulk([
    { name: "done", data: {} },
    { name: "broken", data: {} },
  ]);
  await new Worker(
    name,
    async (job) => {
      if (job.name === "broken") throw new Error("broken");
      return job.id;
    },
    options,
  ).drain();
  await queue.add("waiting", { n: 1 });
  await queue.add("later", {}, { delay: 60_000 });
  await queue.add("urgent", {}, { priority: 4 });
  await queue.add("owner", {}, { deduplication: { id: "d", ttl: 60_000 } });
  await queue.upsertJobScheduler("yearly", { pattern: "0 0 1 1 *" }, { data: {} });
  const flows = new FlowProducer(options);
  await flows.add({ name: "home", queueName: name, children: [{ name: "kid", queueName: name }] });
  await flows.add({
    name: "away",
    queueName: `${name}-parents`,
    children: [{ name: "kid", queueName: name }],
  });
  for (let i = 0; i < 5; i++) await queue.add("more", { i });
  return queue;
}

/** The replay guards of one queue's calls, beside its key space. */
const guardsOf = (prefix: string, name: string) => scanQueue(prefix, `nq-req:${name}`, stack.direct);

describe("Queue.obliterate leaves nothing under the queue", () => {
  it("SCAN <prefix>:<queue>:* is empty afterwards; the guards sit beside it and expire", async () => {
    const prefix = uniquePrefix("ob");
    const queue = await busyQueue(prefix, "q");
    expect(await scanQueue(prefix, "q", stack.direct)).not.toEqual([]);
    await queue.obliterate({ count: 3 });
    expect(await scanQueue(prefix, "q", stack.direct)).toEqual([]);
    const guards = await guardsOf(prefix, "q");
    expect(guards.length).toBeGreaterThan(0);
    for (const guard of guards) expect(await stack.direct.pttl(guard)).toBeGreaterThan(0);
    // The other queue's parent stays, in its own queue, as BullMQ leaves it.
    expect(await stack.direct.llen(`${prefix}:q-parents:wait`)).toBe(1);
  });

  it("a replayed final step answers success, recreates nothing and leaves nothing", async () => {
    const prefix = uniquePrefix("ob");
    await new Queue("warm", { redis: stack.redis, prefix }).obliterate();
    const queue = await busyQueue(prefix, "q");
    // pauseQueue passes, the single (final) obliterate step runs and its answer is lost, the retry passes.
    stack.rest.setFault({ kind: "drop-after", command: "evalsha", every: 2, times: 1 });
    try {
      const before = stack.rest.stats().requests;
      await queue.obliterate({ count: 10_000 });
      expect(stack.rest.stats().requests - before).toBe(3);
    } finally {
      stack.rest.setFault(null);
    }
    expect(await scanQueue(prefix, "q", stack.direct)).toEqual([]);
    expect(await queue.getJobCounts()).toEqual(expect.objectContaining({ waiting: 0, completed: 0 }));
    expect(await scanQueue(prefix, "q", stack.direct)).toEqual([]);
  });

  it("every step replayed, the final one included, still ends with nothing left", async () => {
    const prefix = uniquePrefix("ob");
    await new Queue("warm", { redis: stack.redis, prefix }).obliterate();
    const queue = await busyQueue(prefix, "q");
    stack.rest.setFault({ kind: "drop-after", command: "evalsha", every: 2 });
    try {
      await queue.obliterate({ count: 2 });
    } finally {
      stack.rest.setFault(null);
    }
    expect(await scanQueue(prefix, "q", stack.direct)).toEqual([]);
    // A second obliterate of the gone queue is harmless too, and leaves nothing either.
    await queue.obliterate();
    expect(await scanQueue(prefix, "q", stack.direct)).toEqual([]);
  });
});

describe("clean and drain leave no guard under the queue", () => {
  it("only the queue's own keys stay under it; the steps' guards sit beside it", async () => {
    const prefix = uniquePrefix("ob");
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.addBulk([1, 2, 3].map((i) => ({ name: "x", data: { i } })));
    await queue.add("later", {}, { delay: 60_000 });
    expect(await queue.clean(0, 0, "wait")).toHaveLength(3);
    expect(await queue.drain(true)).toBe(1);
    const left = (await scanQueue(prefix, "q", stack.direct)).map((key) => key.slice(`${prefix}:q:`.length));
    // Before, each step left `{P}nq-req:<token>-<step>` here for ten minutes.
    expect(left.filter((key) => key.startsWith("nq"))).toEqual([]);
    expect(left).not.toContain("wait");
    expect((await guardsOf(prefix, "q")).length).toBeGreaterThan(0);
  });
});
