/**
 * Flows written by nimbusq's FlowProducer are run by real BullMQ 6.7.0 Workers: children first (also
 * in other queues), the parent only after them, and the child-failure policies applied by BullMQ.
 */
import { describe, expect, it } from "vitest";
import type { FlowJob } from "../../core/index.ts";
import {
  bullFlowJob,
  type Interop,
  interopPeers,
  type Seen,
  sleep,
  storedJob,
  waitFor,
} from "../support/bullmq-peer.ts";

const peers = interopPeers();

describe("a real BullMQ Worker runs nimbusq's flows", () => {
  it("runs the parent only after all its children, across queues, with their return values", async () => {
    const io = peers();
    const log: string[] = [];
    const node = await io.flow().add({
      name: "parent",
      queueName: "flow",
      data: { p: 1 },
      children: [
        { name: "c1", queueName: "flow", data: { c: 1 } },
        { name: "c2", queueName: "flow", data: { c: 2 } },
        { name: "c3", queueName: "other", data: { c: 3 } },
      ],
    });
    expect(await node.job.getState()).toBe("waiting-children");
    let childrenValues: unknown;
    const flowWorker = io.worker("flow", async (job) => {
      log.push(`start:${job.name}`);
      if (job.name === "parent") childrenValues = await job.getChildrenValues();
      log.push(`end:${job.name}`);
      return { from: job.name };
    });
    io.worker("other", async (job) => {
      log.push(`start:${job.name}`);
      await sleep(150);
      log.push(`end:${job.name}`);
      return { from: job.name };
    });
    await waitFor(async () => (await node.job.getState()) === "completed", "the parent's completion");
    expect(log.indexOf("start:parent")).toBe(6);
    expect(
      log
        .slice(0, 6)
        .filter((entry) => entry.startsWith("end:"))
        .sort(),
    ).toEqual(["end:c1", "end:c2", "end:c3"]);
    const [c1, c2] = node.children?.map((child) => child.job) ?? [];
    const c3 = node.children?.[2]?.job;
    expect(childrenValues).toEqual({
      [c1?.key as string]: { from: "c1" },
      [c2?.key as string]: { from: "c2" },
      [c3?.key as string]: { from: "c3" },
    });
    const seenChild = flowWorker.seen.find((s) => s.name === "c1");
    expect(seenChild?.parentKey).toBe(node.job.key);
    expect(seenChild?.parent).toEqual({ id: node.job.id, queueKey: `${io.prefix}:flow` });
    expect(seenChild?.opts.parent).toEqual({ id: node.job.id, queue: `${io.prefix}:flow` });
    expect(await node.job.getChildrenValues()).toEqual(childrenValues);
  });

  it("runs a three-level tree bottom-up", async () => {
    const io = peers();
    await io.flow().add({
      name: "root",
      queueName: "tree",
      children: [{ name: "mid", queueName: "tree", children: [{ name: "leaf", queueName: "tree" }] }],
    });
    const { started } = io.worker("tree");
    const seen = await started(3);
    expect(seen.map((s) => s.name)).toEqual(["leaf", "mid", "root"]);
  });

  it("releases a prioritized parent into prioritized, in its priority's place", async () => {
    const io = peers();
    const queue = io.queue("rel");
    await queue.add("plain", {});
    await queue.add("p1", {}, { priority: 1 });
    await queue.add("p3", {}, { priority: 3 });
    await io.flow().add({
      name: "p2-parent",
      queueName: "rel",
      opts: { priority: 2 },
      children: [{ name: "kid", queueName: "rel" }],
    });
    const seen = await io.worker("rel").started(5);
    expect(seen.map((s) => s.name)).toEqual(["plain", "kid", "p1", "p2-parent", "p3"]);
  });

  it("releases a delayed parent into delayed, due its delay after the last child finished", async () => {
    const io = peers();
    await io.queue("rel").add("plain", {});
    const node = await io.flow().add({
      name: "delayed-parent",
      queueName: "rel",
      opts: { delay: 300 },
      children: [{ name: "kid", queueName: "rel" }],
    });
    const { started } = io.worker("rel");
    const seen = await started(3);
    expect(seen.map((s) => s.name)).toEqual(["plain", "kid", "delayed-parent"]);
    expect(seen[2]?.startedAt).toBeGreaterThanOrEqual((seen[1]?.startedAt ?? 0) + 300);
    expect(node.job.opts.delay).toBe(300);
  });
});

/** Writes `flow` with one producer under a peer set's prefix and runs it with BullMQ workers. */
async function runPolicyFlow(io: Interop, producer: "nimbusq" | "bullmq", flow: FlowJob) {
  if (producer === "nimbusq") await io.flow().add(flow);
  else await io.bullFlow().add(bullFlowJob(flow));
  const parents = io.worker("parents", () => "parent-done");
  const kids = io.worker("kids", (job) => {
    if (job.name === "bad") throw new Error("child failed");
    return "ok";
  });
  return { parents, kids };
}

async function parentOutcome(io: Interop) {
  const nimbus = io.queue("parents");
  const bull = io.bullQueue("parents");
  const ours = await nimbus.getJob("P");
  const theirs = await bull.getJob("P");
  const state = await ours?.getState();
  expect(state).toBe(await theirs?.getState());
  const counts = await ours?.getDependenciesCount();
  expect(counts).toEqual(await theirs?.getDependenciesCount());
  return {
    state,
    failedReason: ours?.failedReason?.replace(io.prefix, "<prefix>"),
    counts,
  };
}

describe("child-failure policies written by nimbusq are applied by BullMQ", () => {
  const policies = [
    { flag: "failParentOnFailure", short: "fpof" },
    { flag: "ignoreDependencyOnFailure", short: "idof" },
    { flag: "removeDependencyOnFailure", short: "rdof" },
    { flag: "continueParentOnFailure", short: "cpof" },
    { flag: "none", short: "" },
  ] as const;

  for (const { flag, short } of policies) {
    it(`${flag}: same outcome as BullMQ's own flow`, async () => {
      const shape: FlowJob = {
        name: "parent",
        queueName: "parents",
        opts: { jobId: "P" },
        children: [
          {
            name: "bad",
            queueName: "kids",
            opts: { jobId: "bad", ...(flag === "none" ? {} : { [flag]: true }) },
          },
        ],
      };
      const outcomes = [];
      let seenBad: Seen | undefined;
      for (const producer of ["nimbusq", "bullmq"] as const) {
        const io = peers(producer);
        const { parents, kids } = await runPolicyFlow(io, producer, shape);
        await kids.started(1);
        await waitFor(async () => (await io.queue("kids").getJob("bad"))?.finishedOn, "the child's failure");
        if (flag === "none") await sleep(300);
        else await parents.started(flag === "failParentOnFailure" ? 0 : 1);
        await waitFor(async () => {
          const state = await io
            .queue("parents")
            .getJob("P")
            .then((job) => job?.getState());
          return flag === "none" || state === "completed" || state === "failed";
        }, "the parent's outcome");
        outcomes.push(await parentOutcome(io));
        if (producer === "nimbusq") {
          seenBad = kids.seen[0];
          const parentField = (await storedJob(io.raw, io.key("kids", "bad"))).parent;
          expect(parentField).toEqual({
            id: "P",
            queueKey: `${io.prefix}:parents`,
            ...(short ? { [short]: true } : {}),
          });
        }
      }
      expect(outcomes[0]).toEqual(outcomes[1]);
      if (flag !== "none") expect(seenBad?.opts[flag]).toBe(true);
      expect(seenBad?.opts).not.toHaveProperty(short || "fpof");
      const expected = {
        failParentOnFailure: { state: "failed", failedReason: "child <prefix>:kids:bad failed" },
        ignoreDependencyOnFailure: {
          state: "completed",
          counts: { processed: 0, unprocessed: 0, ignored: 1, failed: 0 },
        },
        removeDependencyOnFailure: {
          state: "completed",
          counts: { processed: 0, unprocessed: 0, ignored: 0, failed: 0 },
        },
        continueParentOnFailure: {
          state: "completed",
          counts: { processed: 0, unprocessed: 0, ignored: 1, failed: 0 },
        },
        none: { state: "waiting-children", counts: { processed: 0, unprocessed: 1, ignored: 0, failed: 0 } },
      }[flag];
      expect(outcomes[0]).toMatchObject(expected);
    });
  }

  it("continueParentOnFailure starts the parent while another child is still pending", async () => {
    const io = peers();
    await io.flow().add({
      name: "parent",
      queueName: "parents",
      opts: { jobId: "P" },
      children: [
        { name: "bad", queueName: "kids", opts: { jobId: "bad", continueParentOnFailure: true } },
        { name: "slow", queueName: "kids", opts: { jobId: "slow", delay: 800 } },
      ],
    });
    const parents = io.worker("parents", () => "parent-done");
    const kids = io.worker("kids", (job) => {
      if (job.name === "bad") throw new Error("child failed");
      return "ok";
    });
    const [parentStart] = await parents.started(1);
    const all = await kids.started(2);
    expect(parentStart?.startedAt).toBeLessThan(all[1]?.startedAt ?? 0);
  });
});

describe("nimbusq's flows are stored as BullMQ's", () => {
  it("writes the same hashes, dependency sets and waiting-children scores", async () => {
    const flow = (timestamp: number): FlowJob => ({
      name: "root",
      queueName: "parents",
      data: { r: 1 },
      opts: { jobId: "root", timestamp, priority: 3 },
      children: [
        { name: "a", queueName: "kids", data: { a: 1 }, opts: { jobId: "a", failParentOnFailure: true } },
        { name: "b", queueName: "kids", opts: { jobId: "b", ignoreDependencyOnFailure: true, attempts: 2 } },
        {
          name: "c",
          queueName: "parents",
          opts: { jobId: "c", removeDependencyOnFailure: true, delay: 500 },
        },
        {
          name: "d",
          queueName: "kids",
          opts: { jobId: "d", continueParentOnFailure: true, timestamp: timestamp + 1 },
          children: [{ name: "e", queueName: "kids", opts: { jobId: "e", priority: 2 } }],
        },
      ],
    });
    const timestamp = Date.now() - 1000;
    const ours = peers("n");
    const theirs = peers("b");
    await ours.flow().add(flow(timestamp));
    await theirs.bullFlow().add(bullFlowJob(flow(timestamp)));
    const snapshot = async (io: Interop) => {
      const out: Record<string, unknown> = {};
      for (const [queue, id] of [
        ["parents", "root"],
        ["kids", "a"],
        ["kids", "b"],
        ["parents", "c"],
        ["kids", "d"],
        ["kids", "e"],
      ] as const) {
        const key = io.key(queue, id);
        out[`${queue}:${id}`] = await storedJob(io.raw, key);
        out[`${queue}:${id}:dependencies`] = (await io.raw.smembers(`${key}:dependencies`)).sort();
      }
      for (const queue of ["parents", "kids"]) {
        out[`${queue}:waiting-children`] = await io.raw.zrange(
          io.key(queue, "waiting-children"),
          0,
          -1,
          "WITHSCORES",
        );
        out[`${queue}:wait`] = await io.raw.lrange(io.key(queue, "wait"), 0, -1);
        out[`${queue}:prioritized`] = await io.raw.zrange(io.key(queue, "prioritized"), 0, -1);
        out[`${queue}:delayed`] = await io.raw.zrange(io.key(queue, "delayed"), 0, -1);
      }
      return JSON.parse(JSON.stringify(out).replaceAll(io.prefix, "<prefix>"));
    };
    expect(await snapshot(ours)).toEqual(await snapshot(theirs));
  });
});
