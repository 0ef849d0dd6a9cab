/**
 * A real BullMQ 6.7.0 QueueEvents hears nimbusq's writes exactly as it hears BullMQ's own: each
 * scenario runs once through nimbusq and once through BullMQ (each under its own prefix, same queue
 * names and ids) and the two recorded event logs must be equal.
 */
import { describe, expect, it } from "vitest";
import {
  type Interop,
  interopPeers,
  type Producer,
  producer,
  type RecordedEvent,
  waitFor,
} from "../support/bullmq-peer.ts";

const peers = interopPeers();

/**
 * Runs `scenario` through both producers and returns both event logs of `queue`, each up to the
 * `added` event of a sentinel job added last.
 */
async function bothLogs(
  queue: string,
  scenario: (p: Producer, io: Interop) => Promise<void>,
): Promise<{ nimbusq: RecordedEvent[]; bullmq: RecordedEvent[] }> {
  const logs: Record<string, RecordedEvent[]> = {};
  for (const which of ["nimbusq", "bullmq"] as const) {
    const io = peers(which);
    const { log } = await io.events(queue);
    const p = producer(io, which);
    await scenario(p, io);
    await p.add(queue, "sentinel", {});
    await waitFor(() => log.some((e) => e.event === "added" && e.name === "sentinel"), `${which}'s sentinel`);
    logs[which] = log.filter((e) => e.event !== "paused");
  }
  return { nimbusq: logs.nimbusq ?? [], bullmq: logs.bullmq ?? [] };
}

describe("QueueEvents receives nimbusq's add events with BullMQ's fields", () => {
  it("added, waiting, delayed, waiting-children, duplicated and deduplicated", async () => {
    const base = Date.now();
    const { nimbusq, bullmq } = await bothLogs("ev", async (p) => {
      await p.add("ev", "std", { n: 1 });
      await p.add("ev", "later", {}, { delay: 60_000, timestamp: base });
      await p.add("ev", "prio", {}, { priority: 4 });
      await p.add("ev", "lifo", {}, { lifo: true });
      await p.add("ev", "custom", { n: 5 }, { jobId: "my-job" });
      await p.add("ev", "custom", { n: 6 }, { jobId: "my-job" });
      await p.add("ev", "dedup", {}, { deduplication: { id: "d" } });
      await p.add("ev", "dedup", {}, { deduplication: { id: "d" } });
      await p.add("ev", "ttl", {}, { deduplication: { id: "t", ttl: 10_000, extend: true } });
      await p.add("ev", "ttl", {}, { deduplication: { id: "t", ttl: 10_000, extend: true } });
      await p.flow({
        name: "parent",
        queueName: "ev",
        opts: { jobId: "P" },
        children: [
          { name: "kid", queueName: "ev", opts: { jobId: "K" } },
          { name: "kid-later", queueName: "ev", opts: { jobId: "KL", delay: 60_000, timestamp: base } },
        ],
      });
    });
    expect(nimbusq).toEqual(bullmq);
    expect(nimbusq).toEqual([
      { event: "added", jobId: "1", name: "std" },
      { event: "waiting", jobId: "1" },
      { event: "added", jobId: "2", name: "later" },
      { event: "delayed", jobId: "2", delay: base + 60_000 },
      { event: "added", jobId: "3", name: "prio" },
      { event: "waiting", jobId: "3" },
      { event: "added", jobId: "4", name: "lifo" },
      { event: "waiting", jobId: "4" },
      { event: "added", jobId: "my-job", name: "custom" },
      { event: "waiting", jobId: "my-job" },
      { event: "duplicated", jobId: "my-job" },
      { event: "added", jobId: "7", name: "dedup" },
      { event: "waiting", jobId: "7" },
      { event: "deduplicated", jobId: "7", deduplicationId: "d", deduplicatedJobId: "8" },
      { event: "added", jobId: "9", name: "ttl" },
      { event: "waiting", jobId: "9" },
      { event: "deduplicated", jobId: "9", deduplicationId: "t", deduplicatedJobId: "10" },
      { event: "added", jobId: "P", name: "parent" },
      { event: "waiting-children", jobId: "P" },
      { event: "added", jobId: "K", name: "kid" },
      { event: "waiting", jobId: "K" },
      { event: "added", jobId: "KL", name: "kid-later" },
      { event: "delayed", jobId: "KL", delay: base + 60_000 },
      { event: "added", jobId: "14", name: "sentinel" },
      { event: "waiting", jobId: "14" },
    ]);
  });

  it("deduplication replace: a delayed owner is removed and replaced, any other owner is kept", async () => {
    const base = Date.now();
    const { nimbusq, bullmq } = await bothLogs("ev", async (p) => {
      const replace = { id: "r", ttl: 10_000, replace: true };
      await p.add("ev", "first", {}, { delay: 60_000, timestamp: base, deduplication: replace });
      await p.add("ev", "second", {}, { delay: 60_000, timestamp: base, deduplication: replace });
      const waiting = { id: "w", replace: true };
      await p.add("ev", "w-first", {}, { deduplication: waiting });
      await p.add("ev", "w-second", {}, { deduplication: waiting });
      const extend = { id: "x", ttl: 10_000, extend: true, replace: true };
      await p.add("ev", "x-first", {}, { deduplication: extend });
      await p.add("ev", "x-second", {}, { deduplication: extend });
    });
    expect(nimbusq).toEqual(bullmq);
    expect(nimbusq.slice(0, 5)).toEqual([
      { event: "added", jobId: "1", name: "first" },
      { event: "delayed", jobId: "1", delay: base + 60_000 },
      { event: "removed", jobId: "1", prev: "delayed" },
      { event: "deduplicated", jobId: "2", deduplicationId: "r", deduplicatedJobId: "1" },
      { event: "added", jobId: "2", name: "second" },
    ]);
  });

  it("a parent whose only child already completed is released at once, as by BullMQ", async () => {
    const { nimbusq, bullmq } = await bothLogs("ev", async (p, io) => {
      await p.add("done", "finished-child", {}, { jobId: "C" });
      await p.add("done", "finished-child-2", {}, { jobId: "C2" });
      const { started } = io.worker("done");
      await started(2);
      await waitFor(
        async () => (await io.raw.zcard(io.key("done", "completed"))) === 2,
        "the children's completion",
      );
      await p.flow({
        name: "parent",
        queueName: "ev",
        opts: { jobId: "P" },
        children: [{ name: "finished-child", queueName: "done", opts: { jobId: "C" } }],
      });
      await p.flow({
        name: "delayed-parent",
        queueName: "ev",
        opts: { jobId: "PD", delay: 60_000 },
        children: [{ name: "finished-child-2", queueName: "done", opts: { jobId: "C2" } }],
      });
    });
    // The released delayed parent is due 60 s after its release, by each producer's clock: the two
    // runs happen at different times, so the due times agree within the runs' distance, not exactly
    // (rounding both to 10 s failed whenever the two straddled a boundary).
    const dueOf = (log: RecordedEvent[]) =>
      Number(log.find((e) => e.event === "delayed" && e.jobId === "PD")?.delay ?? Number.NaN);
    const blur = (log: RecordedEvent[]) =>
      log.map((e) => (e.event === "delayed" && e.jobId === "PD" ? { ...e, delay: "due" } : e));
    expect(blur(nimbusq)).toEqual(blur(bullmq));
    expect(Math.abs(dueOf(nimbusq) - dueOf(bullmq))).toBeLessThan(10_000);
    expect(nimbusq.slice(0, 6)).toEqual([
      { event: "added", jobId: "P", name: "parent" },
      { event: "waiting-children", jobId: "P" },
      { event: "waiting", jobId: "P", prev: "waiting-children" },
      { event: "added", jobId: "PD", name: "delayed-parent" },
      { event: "waiting-children", jobId: "PD" },
      { event: "delayed", jobId: "PD", delay: expect.any(Number) },
    ]);
  });
});

describe("QueueEvents receives nimbusq's removals as BullMQ's", () => {
  it("removed with BullMQ's prev names, and a parent released by its last child's removal", async () => {
    const base = Date.now();
    const { nimbusq, bullmq } = await bothLogs("ev", async (p) => {
      await p.add("ev", "waiting", {});
      await p.add("ev", "delayed", {}, { delay: 60_000, timestamp: base });
      await p.add("ev", "prio", {}, { priority: 2 });
      await p.add("ev", "owner", {}, { deduplication: { id: "o" } });
      await p.flow({
        name: "parent",
        queueName: "ev",
        opts: { jobId: "P" },
        children: [{ name: "kid", queueName: "ev", opts: { jobId: "K" } }],
      });
      // A released parent goes to the end of wait whatever its priority or delay.
      await p.flow({
        name: "prio-parent",
        queueName: "ev",
        opts: { jobId: "PP", priority: 3, delay: 1000 },
        children: [{ name: "kid", queueName: "other", opts: { jobId: "OK" } }],
      });
      for (const id of ["1", "2", "3", "4", "K"]) await p.remove("ev", id);
      await p.remove("other", "OK");
      // The dedup window ended with its owner.
      await p.add("ev", "owner-2", {}, { deduplication: { id: "o" } });
    });
    expect(nimbusq).toEqual(bullmq);
    const removals = nimbusq.filter((e) => e.event === "removed" || e.prev === "waiting-children");
    expect(removals).toEqual([
      { event: "removed", jobId: "1", prev: "wait" },
      { event: "removed", jobId: "2", prev: "delayed" },
      { event: "removed", jobId: "3", prev: "prioritized" },
      { event: "removed", jobId: "4", prev: "wait" },
      { event: "waiting", jobId: "P", prev: "waiting-children" },
      { event: "removed", jobId: "K", prev: "wait" },
      { event: "waiting", jobId: "PP", prev: "waiting-children" },
    ]);
  });
});
