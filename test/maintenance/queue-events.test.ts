/**
 * What a real BullMQ QueueEvents hears from nimbusq's maintenance operations: the same events, with the
 * same fields, that BullMQ's own operations write.
 */
import { describe, expect, it } from "vitest";
import { interopPeers, waitFor } from "../support/bullmq-peer.ts";

const peers = interopPeers();

describe("a BullMQ QueueEvents listening to nimbusq's maintenance", () => {
  it("hears cleaned, removed, waiting prev delayed and delayed with its due time", async () => {
    const io = peers("qe");
    const queue = io.queue("q");
    const { log } = await io.events("q", io.prefix, ["cleaned", "removed", "waiting", "delayed"]);
    const [first, second, later] = await queue.addBulk([
      { name: "a", data: {}, opts: { timestamp: 1 } },
      { name: "b", data: {} },
      { name: "c", data: {}, opts: { delay: 60_000 } },
    ]);
    await waitFor(() => log.length >= 3, "the add events");
    log.splice(0);
    expect(await queue.clean(60_000, 0, "wait")).toEqual([first?.id]);
    await second?.remove();
    const before = Date.now();
    await later?.changeDelay(120_000);
    await later?.promote();
    await waitFor(() => log.length >= 4, "four events");
    expect(log).toEqual([
      { event: "cleaned", count: "1" },
      { event: "removed", jobId: second?.id, prev: "wait" },
      { event: "delayed", jobId: later?.id, delay: expect.any(Number) },
      { event: "waiting", jobId: later?.id, prev: "delayed" },
    ]);
    expect(log[2]?.delay).toBeGreaterThanOrEqual(before + 120_000);
  });
});
