import { describe, expect, it } from "vitest";
import {
  type ActiveJob,
  FlowProducer,
  Queue,
  UnrecoverableError,
  WaitingChildrenError,
  Worker,
} from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function setup() {
  const prefix = uniquePrefix();
  const redis = sharedRedis();
  const flow = new FlowProducer({ redis, prefix });
  const worker = (queueName: string, processor: (job: ActiveJob) => Promise<unknown>) =>
    new Worker(queueName, processor, { redis, prefix, batchSize: 10 });
  return { prefix, redis, flow, worker };
}

describe("flows under nimbusq workers", () => {
  it("runs the parent only after its children, with their return values", async () => {
    const { prefix, redis, flow, worker } = setup();
    const tree = await flow.add({
      name: "parent",
      queueName: "parents",
      children: [
        { name: "a", queueName: "kids", data: { v: 1 } },
        { name: "b", queueName: "kids", data: { v: 2 } },
      ],
    });
    const parentRun: Record<string, unknown>[] = [];
    const parents = worker("parents", async (job) => {
      parentRun.push(await job.getChildrenValues());
      return "parent done";
    });
    expect((await parents.drain()).leased).toBe(0);
    await worker("kids", async (job) => (job.data as { v: number }).v * 10).drain();
    const events = (await direct.xrange(`${prefix}:parents:events`, "-", "+")).map(([, f]) => f);
    expect(events.at(-1)).toEqual(["event", "waiting", "jobId", tree.job.id, "prev", "waiting-children"]);
    expect(await direct.lrange(`${prefix}:parents:wait`, 0, -1)).toEqual([tree.job.id]);
    await parents.drain();
    const [a, b] = tree.children ?? [];
    expect(parentRun).toEqual([{ [`${prefix}:kids:${a?.job.id}`]: 10, [`${prefix}:kids:${b?.job.id}`]: 20 }]);
    const parentJob = await new Queue("parents", { redis, prefix }).getJob(tree.job.id);
    expect(await parentJob?.getState()).toBe("completed");
    expect(await parentJob?.getDependenciesCount()).toEqual({
      processed: 2,
      unprocessed: 0,
      ignored: 0,
      failed: 0,
    });
  });

  const policies = [
    { flag: "failParentOnFailure", parentState: "failed", reason: /child .* failed/ },
    { flag: "continueParentOnFailure", parentState: "completed" },
    { flag: "ignoreDependencyOnFailure", parentState: "completed" },
    { flag: "removeDependencyOnFailure", parentState: "completed" },
    { flag: undefined, parentState: "waiting-children" },
  ] as const;
  for (const policy of policies) {
    it(`a failing child with ${policy.flag ?? "no policy"} leaves the parent ${policy.parentState}`, async () => {
      const { prefix, redis, flow, worker } = setup();
      const opts = policy.flag ? { [policy.flag]: true } : {};
      const tree = await flow.add({
        name: "parent",
        queueName: "parents",
        children: [
          { name: "bad", queueName: "kids", opts },
          { name: "good", queueName: "kids" },
        ],
      });
      await worker("kids", async (job) => {
        if (job.name === "bad") throw new UnrecoverableError("child broke");
        return "ok";
      }).drain();
      await worker("parents", async () => "parent ran").drain();
      const parent = await new Queue("parents", { redis, prefix }).getJob(tree.job.id);
      expect(await parent?.getState()).toBe(policy.parentState);
      if ("reason" in policy) expect(parent?.failedReason).toMatch(policy.reason);
      const counts = await parent?.getDependenciesCount();
      if (policy.flag === "continueParentOnFailure" || policy.flag === "ignoreDependencyOnFailure") {
        expect(counts?.ignored).toBe(1);
      }
      if (policy.flag === "failParentOnFailure") expect(counts?.failed).toBe(1);
    });
  }

  it("moveToWaitingChildren parks a running parent until its new child completes", async () => {
    const { prefix, redis, worker } = setup();
    const parents = new Queue("parents", { redis, prefix });
    const kids = new Queue("kids", { redis, prefix });
    await parents.add("parent", {}, { jobId: "p1" });
    let runs = 0;
    const parentWorker = worker("parents", async (job) => {
      runs += 1;
      if (runs === 1) {
        await kids.add("late-child", {}, { parent: { id: job.id, queue: parents.qualifiedName } });
        if (await job.moveToWaitingChildren()) throw new WaitingChildrenError();
      }
      return "second run";
    });
    await parentWorker.drain();
    expect(await (await parents.getJob("p1"))?.getState()).toBe("waiting-children");
    await worker("kids", async () => "kid").drain();
    await parentWorker.drain();
    expect(runs).toBe(2);
    expect(await direct.hget(`${prefix}:parents:p1`, "returnvalue")).toBe('"second run"');
  });
});
