/**
 * Flows added by a real BullMQ 6.7.0 FlowProducer across two queues, processed by nimbusq's Worker:
 * parents run after their children with their values, and each child-failure policy (fpof, cpof,
 * idof, rdof, none) leaves the parent as a real BullMQ Worker leaves it for the same flow — including
 * BullMQ's refusal to complete a parent whose children are still pending or have failed.
 */
import type { FlowJob as BullFlowJob } from "bullmq";
import { describe, expect, it } from "vitest";
import { type Interop, interopPeers, sleep, waitFor } from "../support/bullmq-peer.ts";
import {
  byJob,
  type EitherJob,
  finished,
  outcomes,
  processWith,
  recordAll,
  type Side,
  sides,
} from "../support/mixed-fleet.ts";

const peers = interopPeers();

interface FlowJobHandle extends EitherJob {
  getChildrenValues(): Promise<Record<string, unknown>>;
}

/** "bad…" children fail; the others return their name. */
function kidProcessor(job: EitherJob): Promise<unknown> {
  if (job.name.startsWith("bad")) return Promise.reject(new Error(`${job.name} broke`));
  return Promise.resolve({ kid: job.name });
}

/** Returns its children's values; first waits for the kid named by `data.waitForFailed` to fail. */
function parentProcessor(io: Interop) {
  return async (job: EitherJob): Promise<unknown> => {
    const data = job.data as { waitForFailed?: string };
    if (data.waitForFailed) {
      const failed = io.key("kids", "failed");
      await waitFor(
        async () => (await io.raw.zscore(failed, data.waitForFailed as string)) !== null,
        "the child",
      );
    }
    const values = await (job as FlowJobHandle).getChildrenValues();
    return {
      parent: job.name,
      children: Object.values(values)
        .map((v) => JSON.stringify(v))
        .sort(),
    };
  };
}

interface FlowResult {
  jobs: Record<string, unknown>;
  parent: Record<string, unknown>;
  events: Record<string, unknown>;
}

/**
 * Adds `tree` with BullMQ's FlowProducer, runs both queues on `side`, waits for `settled`, and reads
 * every job back through BullMQ (the parent "P" with its dependency bookkeeping).
 */
async function runFlow(
  side: Side,
  tree: BullFlowJob,
  ids: { parents: string[]; kids: string[] },
  settled: (io: Interop) => Promise<boolean>,
  kidsFirst: boolean,
): Promise<FlowResult> {
  const io = peers(side);
  const parentLog = await recordAll(io, "parents");
  const kidLog = await recordAll(io, "kids");
  await io.bullFlow().add(tree);
  processWith(io, side, "kids", kidProcessor);
  // A parent released early (cpof, fpof) would otherwise race its remaining children.
  if (kidsFirst) await finished(io, "kids", ids.kids.length);
  processWith(io, side, "parents", parentProcessor(io));
  await waitFor(() => settled(io), `the flow to settle on ${side}`);
  await sleep(150);
  const parent = await io.bullQueue("parents").getJob("P");
  const blur = (value: unknown) =>
    JSON.parse(JSON.stringify(value ?? null).replaceAll(io.prefix, "<prefix>"));
  const perJob = { ...byJob(parentLog), ...byJob(kidLog) };
  delete perJob["<queue>"];
  return {
    jobs: blur({
      ...(await outcomes(io, "parents", ids.parents)),
      ...(await outcomes(io, "kids", ids.kids)),
    }),
    parent: blur({
      counts: await parent?.getDependenciesCount(),
      values: await parent?.getChildrenValues(),
      failedChildren: await parent?.getFailedChildrenValues(),
      ignored: await parent?.getIgnoredChildrenFailures(),
    }),
    events: blur(perJob),
  };
}

async function bothSides(
  tree: BullFlowJob,
  ids: { parents: string[]; kids: string[] },
  settled: (io: Interop) => Promise<boolean>,
  kidsFirst = false,
): Promise<Record<Side, FlowResult>> {
  const out: Partial<Record<Side, FlowResult>> = {};
  for (const side of sides) out[side] = await runFlow(side, tree, ids, settled, kidsFirst);
  return out as Record<Side, FlowResult>;
}

const isFinished = (queue: string, id: string) => async (io: Interop) =>
  (await io.raw.zscore(io.key(queue, "completed"), id)) !== null ||
  (await io.raw.zscore(io.key(queue, "failed"), id)) !== null;

describe("BullMQ flows on nimbusq's Worker", () => {
  it("runs children (one a parent itself) before their parents, across two queues, with their values", async () => {
    const tree: BullFlowJob = {
      name: "root",
      queueName: "parents",
      opts: { jobId: "P" },
      children: [
        { name: "a", queueName: "kids", opts: { jobId: "A" } },
        {
          name: "b",
          queueName: "kids",
          opts: { jobId: "B" },
          children: [{ name: "grandchild", queueName: "parents", opts: { jobId: "G" } }],
        },
      ],
    };
    const { nimbusq, bullmq } = await bothSides(
      tree,
      { parents: ["P", "G"], kids: ["A", "B"] },
      isFinished("parents", "P"),
    );
    expect(nimbusq).toEqual(bullmq);
    expect(nimbusq.jobs.P).toMatchObject({
      state: "completed",
      returnvalue: { parent: "root", children: ['{"kid":"a"}', '{"kid":"b"}'] },
    });
    expect(nimbusq.parent.counts).toEqual({ processed: 2, unprocessed: 0, ignored: 0, failed: 0 });
  });

  const policies = [
    ["failParentOnFailure", "failed"],
    ["continueParentOnFailure", "completed"],
    ["ignoreDependencyOnFailure", "completed"],
    ["removeDependencyOnFailure", "completed"],
    [undefined, "waiting-children"],
  ] as const;
  for (const [policy, parentState] of policies) {
    it(`a failing child with ${policy ?? "no policy"} leaves the parent ${parentState}, as BullMQ does`, async () => {
      const tree: BullFlowJob = {
        name: "root",
        queueName: "parents",
        opts: { jobId: "P" },
        children: [
          { name: "bad", queueName: "kids", opts: { jobId: "BAD", ...(policy ? { [policy]: true } : {}) } },
          { name: "good", queueName: "kids", opts: { jobId: "GOOD" } },
        ],
      };
      const settled = policy
        ? isFinished("parents", "P")
        : async (io: Interop) =>
            (await io.raw.zcard(io.key("kids", "completed"))) +
              (await io.raw.zcard(io.key("kids", "failed"))) ===
            2;
      const { nimbusq, bullmq } = await bothSides(
        tree,
        { parents: ["P"], kids: ["BAD", "GOOD"] },
        settled,
        true,
      );
      expect(nimbusq).toEqual(bullmq);
      expect(nimbusq.jobs.P).toMatchObject({ state: parentState });
      if (policy === "failParentOnFailure") {
        expect(nimbusq.jobs.P).toMatchObject({ failedReason: "child <prefix>:kids:BAD failed" });
      }
    });
  }

  it("continueParentOnFailure with a child still pending: the parent runs, and cannot complete", async () => {
    const tree: BullFlowJob = {
      name: "root",
      queueName: "parents",
      opts: { jobId: "P" },
      children: [
        { name: "bad", queueName: "kids", opts: { jobId: "BAD", continueParentOnFailure: true } },
        { name: "slow", queueName: "kids", opts: { jobId: "SLOW", delay: 60_000 } },
      ],
    };
    const { nimbusq, bullmq } = await bothSides(
      tree,
      { parents: ["P"], kids: ["BAD", "SLOW"] },
      isFinished("parents", "P"),
    );
    expect(nimbusq).toEqual(bullmq);
    expect(nimbusq.jobs.P).toMatchObject({
      state: "failed",
      failedReason: "Job P has pending dependencies. moveToFinished",
    });
  });

  it("failParentOnFailure while the parent runs: the parent cannot complete with a failed child", async () => {
    const tree: BullFlowJob = {
      name: "root",
      queueName: "parents",
      data: { waitForFailed: "LATE" },
      opts: { jobId: "P", attempts: 3 },
      children: [
        { name: "bad", queueName: "kids", opts: { jobId: "BAD", continueParentOnFailure: true } },
        {
          name: "bad-late",
          queueName: "kids",
          opts: { jobId: "LATE", delay: 300, failParentOnFailure: true },
        },
      ],
    };
    const { nimbusq, bullmq } = await bothSides(
      tree,
      { parents: ["P"], kids: ["BAD", "LATE"] },
      isFinished("parents", "P"),
    );
    expect(nimbusq).toEqual(bullmq);
    expect(nimbusq.jobs.P).toMatchObject({
      state: "failed",
      attemptsMade: 1,
      failedReason: "Cannot complete job P because it has at least one failed child. moveToFinished",
    });
  });
});
