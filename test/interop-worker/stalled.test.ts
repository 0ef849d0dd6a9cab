/**
 * Stalled jobs across the two implementations: a job nimbusq leased and abandoned is requeued by a
 * real BullMQ 6.7.0 Worker's stalled checker and run by it; a job a real BullMQ Worker abandoned is
 * requeued by nimbusq's `recoverStalled` and run by nimbusq. Both count the stall (`stc`) and write
 * the `stalled` event alike, and a job stalled once on each side is failed by the next worker.
 */
import { describe, expect, it } from "vitest";
import { type Interop, interopPeers, type RecordedEvent, sleep, waitFor } from "../support/bullmq-peer.ts";
import { byJob, delivered, finished, nimbusWorker, outcomes, recordAll } from "../support/mixed-fleet.ts";
import { leaseBatch } from "../support/worker-calls.ts";

const peers = interopPeers();

/** Leases up to `count` jobs of queue "q" for a worker that then vanishes (never extends, never acks). */
async function abandonLease(io: Interop, count: number, leaseMs: number): Promise<string[]> {
  const { context } = nimbusWorker(io, "q", async () => undefined);
  const lease = await leaseBatch(context, {
    token: `vanished:${count}`,
    count,
    leaseMs,
    limiterMax: 0,
    limiterDuration: 0,
    workerName: "",
  });
  return lease.jobs.map((job) => job.id);
}

/** A BullMQ Worker that takes job "1", never finishes it, and is closed (force) so its lock lapses. */
async function bullAbandons(io: Interop, lockDuration: number, stalledInterval?: number): Promise<void> {
  const hung = io.worker("q", () => new Promise(() => {}), {
    lockDuration,
    ...(stalledInterval ? { stalledInterval } : { skipStalledCheck: true }),
  });
  await hung.started(1, 5000);
  await hung.worker.close(true);
  await waitFor(async () => (await io.raw.exists(io.key("q", "1:lock"))) === 0, "the lock to lapse", 5000);
}

const jobEvents = (log: RecordedEvent[]) => byJob(log)["1"];

describe("stalled jobs between nimbusq and BullMQ", () => {
  it("nimbusq abandons, BullMQ's stalled checker requeues and BullMQ runs; and the reverse; same stc and events", async () => {
    // nimbusq abandons two jobs; a third is ready.
    const ours = peers("a");
    const oursLog = await recordAll(ours, "q");
    const oursQueue = ours.bullQueue("q");
    await oursQueue.addBulk([
      { name: "abandoned", data: {} },
      { name: "abandoned", data: {} },
    ]);
    expect(await abandonLease(ours, 2, 200)).toEqual(["1", "2"]);
    await oursQueue.add("fresh", {});
    const bullStalled: string[] = [];
    const rescuer = ours.worker("q", (job) => `ran ${job.name}`, { stalledInterval: 300 });
    rescuer.worker.on("stalled", (jobId, prev) => bullStalled.push(`${jobId} ${prev}`));
    await finished(ours, "q", 3, 8000);
    expect(bullStalled.sort()).toEqual(["1 active", "2 active"]);
    expect(rescuer.seen.map((s) => s.id)).toEqual(["3", expect.any(String), expect.any(String)]);
    const ourJobs = await outcomes(ours, "q", ["1", "2", "3"]);
    for (const id of ["1", "2"]) {
      expect(ourJobs[id]).toMatchObject({
        state: "completed",
        returnvalue: "ran abandoned",
        stalledCounter: 1,
        attemptsStarted: 2,
        attemptsMade: 1,
      });
    }
    expect(ourJobs["3"]).toMatchObject({ stalledCounter: 0, attemptsStarted: 1 });

    // The reverse: BullMQ abandons, nimbusq recovers (BullMQ's rule: a snapshot, then a check after
    // the lock is gone) and runs it.
    const theirs = peers("b");
    const theirsLog = await recordAll(theirs, "q");
    await theirs.bullQueue("q").add("abandoned", {});
    await bullAbandons(theirs, 400);
    const nimbus = nimbusWorker(theirs, "q", async (job) => `ran ${job.name}`, { stalledInterval: 100 });
    const nimbusStalled: string[] = [];
    nimbus.on("stalled", (jobId, prev) => nimbusStalled.push(`${jobId} ${prev}`));
    expect(await nimbus.recoverStalled()).toEqual([]);
    await sleep(110);
    expect(await nimbus.recoverStalled()).toEqual(["1"]);
    expect(nimbusStalled).toEqual(["1 active"]);
    expect(await nimbus.drain()).toMatchObject({ completed: 1, failed: 0 });
    const theirJobs = await outcomes(theirs, "q", ["1"]);
    expect(theirJobs["1"]).toEqual(ourJobs["1"]);

    // Both streams tell the same story for the stalled job.
    await delivered(ours, "q", oursLog);
    await delivered(theirs, "q", theirsLog);
    expect(jobEvents(theirsLog)).toEqual(jobEvents(oursLog));
    expect(jobEvents(oursLog)).toEqual([
      { event: "added", jobId: "1", name: "abandoned" },
      { event: "waiting", jobId: "1" },
      { event: "active", jobId: "1", prev: "waiting" },
      { event: "waiting", jobId: "1", prev: "active" },
      { event: "stalled", jobId: "1" },
      { event: "active", jobId: "1", prev: "waiting" },
      { event: "completed", jobId: "1", returnvalue: "ran abandoned", prev: "active" },
    ]);
  });

  it("a job stalled once by each side passes maxStalledCount and is failed by the next nimbusq worker", async () => {
    const io = peers();
    const log = await recordAll(io, "q");
    await io.bullQueue("q").add("hot-potato", {}, { attempts: 3 });
    // 1. nimbusq leases and vanishes; BullMQ's checker requeues it (stc 1), takes it and hangs.
    expect(await abandonLease(io, 1, 200)).toEqual(["1"]);
    await bullAbandons(io, 400, 300);
    expect(await io.raw.hget(io.key("q", "1"), "stc")).toBe("1");
    // 2. nimbusq's check requeues it again (stc 2 > maxStalledCount 1): BullMQ's deferred failure.
    const nimbus = nimbusWorker(io, "q", async () => "must not run", { stalledInterval: 50 });
    // BullMQ's worker may have run the last check: nimbusq's first one can be too early, or a snapshot.
    await waitFor(
      async () => {
        if ((await nimbus.recoverStalled()).includes("1")) return true;
        await sleep(60);
        return false;
      },
      "nimbusq to requeue the job",
      5000,
    );
    expect(await io.raw.hget(io.key("q", "1"), "defa")).toBe("job stalled more than allowable limit");
    // 3. The next worker fails it at once, whatever attempts are left.
    expect(await nimbus.drain()).toMatchObject({ completed: 0, failed: 1 });
    const jobs = await outcomes(io, "q", ["1"]);
    expect(jobs["1"]).toMatchObject({
      state: "failed",
      failedReason: "job stalled more than allowable limit",
      stalledCounter: 2,
      attemptsStarted: 3,
      attemptsMade: 1,
      deferredFailure: undefined,
    });
    await delivered(io, "q", log);
    expect((jobEvents(log) ?? []).map((e) => e.event)).toEqual([
      "added",
      "waiting",
      "active",
      "waiting",
      "stalled",
      "active",
      "waiting",
      "stalled",
      "active",
      "failed",
    ]);
  });
});
