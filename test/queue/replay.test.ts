/**
 * The HTTP client retries a request whose answer was lost, so a script can run twice for one call.
 * With the REST server executing each add and then dropping the answer, every add must still create
 * each job exactly once and return the first execution's ids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FlowProducer, Queue } from "../../core/index.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

async function addedEvents(eventsKey: string): Promise<string[]> {
  const entries = await stack.direct.xrange(eventsKey, "-", "+");
  return entries.filter(([, f]) => f[1] === "added").map(([, f]) => f[3] as string);
}

async function dropNextScriptAnswer(): Promise<void> {
  // Warm the script cache first so the dropped request is the EVALSHA that does the work.
  stack.rest.setFault({ kind: "drop-after", times: 1, command: "evalsha" });
}

describe("replayed adds", () => {
  it("add: one job, the same id, one added event", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.add("warm", {});
    await dropNextScriptAnswer();
    const before = stack.rest.stats().requests;
    const job = await queue.add("once", { n: 1 });
    expect(stack.rest.stats().requests - before).toBe(2);
    expect(job.id).toBe("2");
    expect(await stack.direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["2", "1"]);
    expect(await addedEvents(`${prefix}:q:events`)).toEqual(["1", "2"]);
    expect((await queue.getJob("2"))?.data).toEqual({ n: 1 });
    // The replay read its guard before counting: the id counter moved once, so the next id is 3.
    expect(await stack.direct.get(`${prefix}:q:id`)).toBe("2");
    expect((await queue.add("next", {})).id).toBe("3");
  });

  it("add retried after a 500 and after answers lost five times over: ids stay consecutive", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.add("warm", {});
    stack.rest.setFault({ kind: "drop-after", times: 5, command: "evalsha" });
    expect((await queue.add("a", {})).id).toBe("2");
    stack.rest.setFault({ kind: "status-500", times: 1, command: "evalsha" });
    expect((await queue.add("b", {})).id).toBe("3");
    stack.rest.setFault(null);
    expect((await queue.add("c", {})).id).toBe("4");
    expect(await stack.direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["4", "3", "2", "1"]);
  });

  it("addBulk of 100 with custom ids, dedup and duplicates: same answer on replay, nothing doubled", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.add("owner", {}, { jobId: "existing", deduplication: { id: "d1" } });
    const jobs = Array.from({ length: 100 }, (_, n) => ({ name: "b", data: { n } }));
    jobs[10] = { name: "dup", data: { n: 10 }, opts: { jobId: "existing" } } as never;
    jobs[20] = { name: "dedup", data: { n: 20 }, opts: { deduplication: { id: "d1" } } } as never;
    jobs[30] = { name: "custom", data: { n: 30 }, opts: { jobId: "fresh-ü" } } as never;
    await dropNextScriptAnswer();
    const before = stack.rest.stats().requests;
    const added = await queue.addBulk(jobs);
    expect(stack.rest.stats().requests - before).toBe(2);
    const ids = added.map((j) => j.id);
    expect(ids[10]).toBe("existing");
    expect(ids[20]).toBe("existing");
    expect(ids[30]).toBe("fresh-ü");
    expect(new Set(ids).size).toBe(99);
    const wait = await stack.direct.lrange(`${prefix}:q:wait`, 0, -1);
    expect(wait.length).toBe(1 + 98);
    expect(new Set(wait).size).toBe(wait.length);
    const addedIds = await addedEvents(`${prefix}:q:events`);
    expect(addedIds.length).toBe(99);
    for (const [i, id] of ids.entries()) {
      if (i === 10 || i === 20) continue;
      expect((await queue.getJob(id))?.data).toEqual({ n: i });
    }
  });

  it("a replayed first call (EVALSHA unknown, then EVAL dropped) still writes once", async () => {
    const prefix = uniquePrefix();
    await stack.direct.script("FLUSH");
    const queue = new Queue("q", { redis: stack.redis, prefix });
    stack.rest.setFault({ kind: "drop-after", times: 1, command: "eval" });
    const job = await queue.add("first", {});
    expect(job.id).toBe("1");
    expect(await stack.direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["1"]);
  });

  it("FlowProducer.add: the tree is written once and the same ids come back", async () => {
    const prefix = uniquePrefix();
    const flow = new FlowProducer({ redis: stack.redis, prefix });
    await flow.add({ name: "warm", queueName: "q" });
    await dropNextScriptAnswer();
    const before = stack.rest.stats().requests;
    const tree = await flow.add({
      name: "parent",
      queueName: "q",
      children: [
        { name: "a", queueName: "q", data: { a: 1 } },
        { name: "b", queueName: "other", data: { b: 1 } },
      ],
    });
    expect(stack.rest.stats().requests - before).toBe(2);
    const parentKey = `${prefix}:q:${tree.job.id}`;
    expect(await stack.direct.zrange(`${prefix}:q:waiting-children`, 0, -1)).toEqual([tree.job.id]);
    expect((await stack.direct.smembers(`${parentKey}:dependencies`)).sort()).toEqual(
      [`${prefix}:q:${tree.children?.[0]?.job.id}`, `${prefix}:other:${tree.children?.[1]?.job.id}`].sort(),
    );
    expect(await stack.direct.llen(`${prefix}:q:wait`)).toBe(2);
    expect(await stack.direct.llen(`${prefix}:other:wait`)).toBe(1);
    expect((await addedEvents(`${prefix}:q:events`)).length).toBe(3);
  });
});
