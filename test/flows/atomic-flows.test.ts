/**
 * A flow above one call (more than 1,000 nodes or ~8 MB) is all or nothing, as BullMQ's
 * FlowProducer.add is: a parent never waits on part of its children. A failure before the commit
 * leaves nothing a reader sees (keyspace digest unchanged but for the id counters), a retry writes the
 * whole tree once, and a replayed call doubles nothing.
 */
import { describe, expect, it } from "vitest";
import { FlowProducer, ParentConflictError, Queue, Worker } from "../../core/index.ts";
import { digestWithoutCounters, type FaultRule, faultPort, InjectedFailure } from "../support/atomic-adds.ts";
import { directConnectionForFile, keysUnder, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
const pad = "x".repeat(1000);

function setup(rule: FaultRule = () => undefined) {
  const prefix = uniquePrefix("atomic-flow");
  const port = faultPort(rule);
  return { prefix, port, flow: new FlowProducer({ redis: port, prefix }) };
}

function tree(children: number, childId?: (i: number) => string | undefined) {
  return {
    name: "report",
    queueName: "parents",
    data: { pad },
    children: Array.from({ length: children }, (_, i) => {
      const jobId = childId?.(i);
      return { name: "part", queueName: "parts", data: { i, pad }, ...(jobId ? { opts: { jobId } } : {}) };
    }),
  };
}

const visible = (prefix: string) =>
  digestWithoutCounters(direct, prefix, (key, type) => key.includes(":nq-req:") && type === "string");

async function expectWholeTree(prefix: string, parentId: string, children: number): Promise<void> {
  expect(await direct.zrange(`${prefix}:parents:waiting-children`, 0, -1)).toEqual([parentId]);
  expect(await direct.scard(`${prefix}:parents:${parentId}:dependencies`)).toBe(children);
  const wait = await direct.lrange(`${prefix}:parts:wait`, 0, -1);
  expect(new Set(wait).size).toBe(children);
  expect(await direct.pttl(`${prefix}:parents:${parentId}`)).toBe(-1);
  expect(await direct.pttl(`${prefix}:parts:${wait[0]}`)).toBe(-1);
  const added = (await direct.xrange(`${prefix}:parts:events`, "-", "+")).filter(([, f]) => f[1] === "added");
  expect(added).toHaveLength(children);
  const parentEvents = (await direct.xrange(`${prefix}:parents:events`, "-", "+")).map(([, f]) => f[1]);
  expect(parentEvents).toEqual(["added", "waiting-children"]);
  for (const key of await keysUnder(direct, `${prefix}:nq-req`))
    expect(await direct.type(key)).toBe("string");
}

describe("FlowProducer.add of 3,000 children", () => {
  it("a staging request lost half-way: no parent waits on part of its children; a retry writes the tree once", async () => {
    const { prefix, port, flow } = setup((script, n) =>
      script === "stageJobs" && n === 2 ? "fail-before" : undefined,
    );
    const before = await visible(prefix);
    await expect(flow.add(tree(3000))).rejects.toBeInstanceOf(InjectedFailure);
    expect(port.calls).toContain("abortStagedJobs");
    expect(await visible(prefix)).toBe(before);
    expect(await direct.exists(`${prefix}:parents:waiting-children`)).toBe(0);
    const node = await new FlowProducer({ redis: sharedRedis(), prefix }).add(tree(3000));
    expect(node.children).toHaveLength(3000);
    await expectWholeTree(prefix, node.job.id, 3000);
  });

  it("a child half-way that exists under another live parent: ParentConflictError, nothing written", async () => {
    const { prefix, flow } = setup();
    await new FlowProducer({ redis: sharedRedis(), prefix }).add({
      name: "other",
      queueName: "parents",
      children: [{ name: "shared", queueName: "parts", opts: { jobId: "shared" } }],
    });
    const before = await visible(prefix);
    await expect(flow.add(tree(3000, (i) => (i === 1600 ? "shared" : undefined)))).rejects.toBeInstanceOf(
      ParentConflictError,
    );
    expect(await visible(prefix)).toBe(before);
  });

  it("the commit's answer lost: the flow resolves and the tree is written once", async () => {
    const { prefix, port, flow } = setup((script, n) =>
      script === "commitStagedJobs" && n === 1 ? "fail-after" : undefined,
    );
    const node = await flow.add(tree(3000));
    expect(port.calls.filter((name) => name === "commitStagedJobs")).toHaveLength(2);
    await expectWholeTree(prefix, node.job.id, 3000);
  });

  it("every call delivered twice: the tree, its dependencies and its events are written once", async () => {
    const { prefix, flow } = setup(() => "twice");
    const node = await flow.add(tree(3000));
    await expectWholeTree(prefix, node.job.id, 3000);
  });

  it("a child that already completed is linked by the commit; the parent waits for the others", async () => {
    const { prefix, flow } = setup();
    const parts = new Queue("parts", { redis: sharedRedis(), prefix });
    await parts.add("done", { pad }, { jobId: "done" });
    const worker = new Worker("parts", async () => ({ ok: 1 }), { redis: sharedRedis(), prefix });
    expect(await worker.drain()).toMatchObject({ completed: 1 });
    const node = await flow.add(tree(1200, (i) => (i === 600 ? "done" : undefined)));
    const parentKey = `${prefix}:parents:${node.job.id}`;
    expect(await direct.hgetall(`${parentKey}:processed`)).toEqual({ [`${prefix}:parts:done`]: '{"ok":1}' });
    expect(await direct.scard(`${parentKey}:dependencies`)).toBe(1199);
    expect(await direct.hget(`${prefix}:parts:done`, "parentKey")).toBe(parentKey);
    expect(await direct.zrange(`${prefix}:parents:waiting-children`, 0, -1)).toEqual([node.job.id]);
  });
});
