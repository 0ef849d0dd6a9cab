/**
 * Jobs written by nimbusq over HTTP, in every state (a real BullMQ Worker takes them through active,
 * completed and failed), read the same through BullMQ 6.7.0's getters as through nimbusq's.
 */
import { describe, expect, it } from "vitest";
import { interopPeers } from "../support/bullmq-peer.ts";
import { bothJobs, populate, readBack } from "../support/bullmq-states.ts";

const peers = interopPeers();

describe("BullMQ's getters and nimbusq's agree on nimbusq's jobs", () => {
  it("getJob, getState, getJobCounts, every list getter, children values and dependency counts", async () => {
    const io = peers();
    const base = await populate(io, "nimbusq");
    const snapshot = await readBack(io);
    expect(snapshot.counts).toEqual({
      active: 1,
      completed: 3,
      delayed: 3,
      failed: 1,
      prioritized: 2,
      waiting: 5,
      "waiting-children": 1,
    });
    expect(snapshot.getWaiting).toEqual(["PC", "8", "6", "7", "custom-1"]);
    expect(snapshot.getPrioritized).toEqual(["10", "9"]);
    expect(snapshot.getDelayed).toEqual(["12", "13", "11"]);
    expect(snapshot["PC:children"]).toEqual({
      values: { "<prefix>:kids:k1": { kid: "k1" }, "<prefix>:kids:k2": { kid: "k2" } },
      deps: { processed: 2, unprocessed: 0, ignored: 0, failed: 0 },
    });
    expect(snapshot["P:children"]).toEqual({
      values: {},
      deps: { processed: 0, unprocessed: 1, ignored: 0, failed: 0 },
    });
    const { ours } = await bothJobs(io, "g", "4");
    expect(ours).toMatchObject({ failedReason: "failure 2", attemptsMade: 2, attemptsStarted: 2 });
    expect(ours?.stacktrace).toHaveLength(2);
    const progressed = await bothJobs(io, "g", "2");
    expect(progressed.ours).toMatchObject({ progress: { pct: 50 }, returnvalue: 7, timestamp: base + 1 });
  });
});
