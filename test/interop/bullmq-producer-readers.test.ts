/**
 * Jobs written by a real BullMQ 6.7.0 Queue / FlowProducer (and taken through active, completed and
 * failed by a real Worker) read the same through nimbusq's getters as through BullMQ's own, and the
 * same as the equivalent jobs written by nimbusq.
 */
import { describe, expect, it } from "vitest";
import { interopPeers } from "../support/bullmq-peer.ts";
import { bothJobs, populate, readBack } from "../support/bullmq-states.ts";

const peers = interopPeers();

/** Fields that depend on the run's clock or on which producer ran, blanked for comparing two runs. */
function blankRunFields(snapshot: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(snapshot)) {
    if (value && typeof value === "object" && "processedOn" in value) {
      const job = value as Record<string, unknown>;
      out[key] = {
        ...job,
        processedOn: job.processedOn === undefined ? undefined : "<ms>",
        finishedOn: job.finishedOn === undefined ? undefined : "<ms>",
        stacktrace: (job.stacktrace as string[]).map(() => "<trace>"),
      };
    } else {
      out[key] = value;
    }
  }
  return out;
}

describe("nimbusq reads BullMQ's jobs as BullMQ does", () => {
  it("getJob fields, getState, counts, list getters in BullMQ's order, children values, dependency counts", async () => {
    const io = peers("b");
    const base = await populate(io, "bullmq");
    await readBack(io);

    const failed = await bothJobs(io, "g", "4");
    expect(failed.ours).toMatchObject({
      id: "4",
      name: "f1",
      data: { n: 4 },
      opts: { attempts: 2, timestamp: base + 3 },
      failedReason: "failure 2",
      attemptsMade: 2,
      attemptsStarted: 2,
      timestamp: base + 3,
    });
    expect(failed.ours?.stacktrace).toHaveLength(2);
    expect(failed.ours?.finishedOn).toBe(failed.theirs?.finishedOn);

    const retried = await bothJobs(io, "g", "3");
    expect(retried.ours).toMatchObject({
      returnvalue: { ok: "c3" },
      attemptsMade: 2,
      attemptsStarted: 2,
      failedReason: "first try fails",
      opts: { attempts: 2, backoff: { type: "fixed", delay: 10 } },
    });

    const progressed = await bothJobs(io, "g", "2");
    expect(progressed.ours).toMatchObject({ progress: { pct: 50 }, returnvalue: 7 });

    const active = await bothJobs(io, "g", "5");
    expect(active.ours?.processedOn).toBe(active.theirs?.processedOn);
    expect(await active.ours?.getState()).toBe("active");

    const delayed = await bothJobs(io, "g", "12");
    expect(delayed.ours).toMatchObject({
      delay: 100_000,
      priority: 2,
      opts: { delay: 100_000, priority: 2 },
    });

    const dedup = await bothJobs(io, "g", "13");
    expect(dedup.ours?.opts.deduplication).toEqual({ id: "dd", ttl: 60_000 });
    expect(dedup.ours?.deduplicationId).toBe("dd");

    const custom = await bothJobs(io, "g", "custom-1");
    expect(custom.ours?.opts).toMatchObject({ jobId: "custom-1", keepLogs: 5 });

    const prio = await bothJobs(io, "g", "10");
    expect(prio.ours?.opts.backoff).toEqual({ type: "exponential", delay: 5 });

    const idleKid = await bothJobs(io, "kids-idle", "idle-kid");
    expect(idleKid.ours?.opts).toMatchObject({
      failParentOnFailure: true,
      parent: { id: "P", queue: `${io.prefix}:g` },
    });
    expect(idleKid.ours?.opts).not.toHaveProperty("fpof");
    expect(idleKid.ours?.parentKey).toBe(`${io.prefix}:g:P`);
    expect(idleKid.ours?.parent).toEqual({ id: "P", queueKey: `${io.prefix}:g`, fpof: true });

    const k2 = await bothJobs(io, "kids", "k2");
    expect(k2.ours).toMatchObject({ opts: { ignoreDependencyOnFailure: true }, returnvalue: { kid: "k2" } });
    expect(await k2.ours?.getState()).toBe("completed");
  });

  it("sees BullMQ's jobs exactly as the same jobs written by nimbusq", async () => {
    const theirs = peers("b");
    const ours = peers("n");
    const base = Date.now() - 60_000;
    await populate(theirs, "bullmq", base);
    await populate(ours, "nimbusq", base);
    const fromBull = blankRunFields(await readBack(theirs));
    const fromNimbus = blankRunFields(await readBack(ours));
    expect(fromNimbus).toEqual(fromBull);
  });
});
