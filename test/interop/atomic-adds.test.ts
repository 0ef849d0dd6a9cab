/**
 * A real BullMQ 6.7.0 Worker on a queue that nimbusq adds to in a staged add (more than one call) sees
 * none of the jobs or all of them: none while the add stages or after it failed, all from its commit
 * on — every sample of the queue's structures, read atomically while the add runs, holds 0 or all of
 * them — and a flow's parent runs only after every one of its children.
 */
import { describe, expect, it } from "vitest";
import { FlowProducer, Queue } from "../../core/index.ts";
import { faultPort, InjectedFailure, kilobyteJobs } from "../support/atomic-adds.ts";
import { interopPeers, sleep, waitFor } from "../support/bullmq-peer.ts";

const peers = interopPeers();

describe("a real BullMQ Worker and a staged add", () => {
  it("sees nothing of an add whose commit failed, then every job of the next one once", async () => {
    const io = peers("atomic");
    const worker = io.worker("q", undefined, { concurrency: 100 });
    await worker.idle();
    const failing = new Queue("q", {
      redis: faultPort((script) => (script === "commitStagedJobs" ? "fail-before" : undefined)),
      prefix: io.prefix,
    });
    await expect(failing.addBulk(kilobyteJobs(2000))).rejects.toBeInstanceOf(InjectedFailure);
    await sleep(500);
    expect(worker.seen).toHaveLength(0);
    expect(Object.values(await io.bullQueue("q").getJobCounts()).every((n) => n === 0)).toBe(true);

    const structures = ["wait", "active", "completed", "failed", "delayed", "prioritized"];
    const samples: number[] = [];
    let adding = true;
    const sampler = (async () => {
      while (adding) {
        const multi = io.raw.multi();
        multi.llen(io.key("q", "wait")).llen(io.key("q", "active"));
        for (const set of structures.slice(2)) multi.zcard(io.key("q", set));
        const replies = (await multi.exec()) ?? [];
        samples.push(replies.reduce((sum, [, n]) => sum + Number(n), 0));
        await sleep(5);
      }
    })();
    const added = await io.queue("q").addBulk(kilobyteJobs(2000));
    adding = false;
    await sampler;
    expect(samples.length).toBeGreaterThan(3);
    expect(samples.every((n) => n === 0 || n === 2000)).toBe(true);
    await worker.started(2000, 30_000);
    await waitFor(
      async () => (await io.raw.zcard(io.key("q", "completed"))) === 2000,
      "all completed",
      30_000,
    );
    const ids = worker.seen.map((seen) => seen.id);
    expect(ids).toHaveLength(2000);
    expect(new Set(ids)).toEqual(new Set(added.map((job) => job.id)));
  }, 60_000);

  it("runs a staged flow's parent only after all of its 1,500 children", async () => {
    const io = peers("atomic-flow");
    const children = io.worker("parts", async (job) => job.data.i, { concurrency: 100 });
    const parents = io.worker("parents", async (job) => Object.keys(await job.getChildrenValues()).length);
    const node = await new FlowProducer({ redis: io.redis, prefix: io.prefix }).add({
      name: "report",
      queueName: "parents",
      children: kilobyteJobs(1500).map((job) => ({ ...job, queueName: "parts" })),
    });
    await parents.started(1, 30_000);
    expect(children.seen).toHaveLength(1500);
    await waitFor(
      async () => (await io.raw.hget(io.key("parents", node.job.id), "returnvalue")) === "1500",
      "the parent's result",
      10_000,
    );
  }, 60_000);
});
