/**
 * The worker's call decisions (core/worker/call-plan.ts) as the pure functions they are: when a call
 * goes out and what it asks for, how many jobs the worker may hold, which prunes ride on which call,
 * and the order of acked entries. No Redis.
 */
import { describe, expect, it } from "vitest";
import type { AckEntry } from "../../core/job/ack-entry.ts";
import {
  ackOrder,
  cycleRequest,
  holdingCapacity,
  type PipelineCounts,
  PruneSchedule,
  planCall,
  pruneOf,
} from "../../core/worker/call-plan.ts";
import type { PipelineSettings } from "../../core/worker/worker-setup.ts";

const settings: PipelineSettings = {
  batchSize: 20,
  concurrency: 10,
  leaseMs: 30_000,
  ackGroupSize: 10,
  ackWaitMs: 10,
  pruneEveryCalls: 10,
  maxRequestBytes: 10_000_000,
  maxCallsInFlight: 2,
  limiterMax: 0,
  limiterDuration: 0,
  groupConcurrency: 0,
  groupLimitMax: 0,
  groupLimitDuration: 0,
  workerName: "w",
  maxLenEvents: 10_000,
  events: "all",
};

const counts = (over: Partial<PipelineCounts> = {}): PipelineCounts => ({
  queued: 0,
  running: 0,
  done: 0,
  oldestDoneWaitedMs: 0,
  ...over,
});

const entry = (over: Partial<AckEntry> = {}): AckEntry =>
  ({ id: "1", outcome: "completed", keepCount: -1, keepAge: 0, keepLimit: 0, ...over }) as AckEntry;

describe("planCall", () => {
  it("an idle worker leases a whole batch (up to what it may hold)", () => {
    expect(planCall(settings, counts(), true, false)).toEqual({ count: 20, ack: false });
    expect(planCall(settings, counts({ running: 5 }), true, false)).toEqual({ count: 15, ack: false });
  });

  it("a busy worker leases only once half a batch fits, and not at all when it holds its capacity", () => {
    expect(planCall(settings, counts({ running: 10 }), true, false)).toEqual({ count: 10, ack: false });
    expect(planCall(settings, counts({ running: 10, queued: 3 }), true, false)).toBeUndefined();
    expect(planCall(settings, counts({ running: 10, queued: 10 }), true, false)).toBeUndefined();
  });

  it("acks when a group is full, when the first done job waited long enough, or to stop", () => {
    const busy = { running: 10, queued: 10 };
    expect(planCall(settings, counts({ ...busy, done: 9 }), true, false)).toBeUndefined();
    expect(planCall(settings, counts({ ...busy, done: 10 }), true, false)).toEqual({ count: 0, ack: true });
    expect(planCall(settings, counts({ ...busy, done: 1, oldestDoneWaitedMs: 10 }), true, false)).toEqual({
      count: 0,
      ack: true,
    });
    expect(planCall(settings, counts({ ...busy, done: 1 }), false, true)).toEqual({ count: 0, ack: true });
  });

  it("acks at once, and leases with it, when a slot would otherwise idle", () => {
    expect(planCall(settings, counts({ running: 3, done: 1 }), true, false)).toEqual({
      count: 17,
      ack: true,
    });
    expect(planCall(settings, counts({ running: 3, done: 1 }), false, false)).toEqual({
      count: 0,
      ack: true,
    });
  });
});

describe("holdingCapacity", () => {
  it("is max(concurrency, batchSize) until attempts have a pace", () => {
    expect(holdingCapacity(settings)).toBe(20);
    expect(holdingCapacity({ ...settings, batchSize: 5 })).toBe(10);
  });

  it("shrinks so the jobs waiting for a slot start within half a lease, never below concurrency", () => {
    // 10 slots, half a lease (15 s) at 10 s an attempt: 15 more would start in time (the batch caps at 20).
    expect(holdingCapacity(settings, 10_000)).toBe(20);
    // 40 s an attempt: 10 slots finish 3.75 attempts in 15 s, so 3 may wait beyond the running ones.
    expect(holdingCapacity(settings, 40_000)).toBe(13);
    // Longer than half a lease: none may wait.
    expect(holdingCapacity(settings, 200_000)).toBe(10);
    // Concurrency 1, lease 3 s, 2 s attempts: hold one at a time.
    expect(holdingCapacity({ ...settings, concurrency: 1, batchSize: 6, leaseMs: 3000 }, 2000)).toBe(1);
    // Quick attempts change nothing.
    expect(holdingCapacity(settings, 5)).toBe(20);
  });

  it("bounds what planCall leases", () => {
    expect(planCall(settings, counts({ averageAttemptMs: 40_000 }), true, false)).toEqual({
      count: 13,
      ack: false,
    });
  });
});

describe("prunes", () => {
  it("an entry owes a prune only when it is kept by count or age and finished", () => {
    expect(pruneOf(entry())).toBeUndefined();
    expect(pruneOf(entry({ keepCount: 100 }))).toBe("completed|100|0|0");
    expect(pruneOf(entry({ outcome: "failed", keepAge: 3600, keepLimit: 50 }))).toBe("failed|-1|3600|50");
    expect(pruneOf(entry({ outcome: "delayed", keepCount: 100 }))).toBeUndefined();
  });

  it("are due with the last ack or every N calls, and cleared by the open call that carries them", () => {
    const schedule = new PruneSchedule();
    expect(schedule.due(true, 10)).toBe(false);
    schedule.note([entry({ keepCount: 5 }), entry({ keepCount: 5 }), undefined]);
    expect(schedule.text()).toBe("completed|5|0|0");
    expect(schedule.due(false, 2)).toBe(false);
    expect(schedule.due(true, 2)).toBe(true);
    schedule.sent(false);
    schedule.sent(false);
    expect(schedule.due(false, 2)).toBe(true);
    schedule.sent(true);
    expect(schedule.due(true, 2)).toBe(false);
    expect(schedule.text()).toBe("");
  });
});

describe("ackOrder and cycleRequest", () => {
  it("sends handed-back jobs last and in reverse, so the first leased ends foremost in wait", () => {
    const items = ["a", "b", "c", "d"].map((id, i) =>
      entry({ id, outcome: i % 2 ? "returned" : "completed" }),
    );
    expect(ackOrder(items, (item) => item).map((item) => item.id)).toEqual(["a", "c", "d", "b"]);
  });

  it("fills a request from the settings: the peek covers every call that may be in flight", () => {
    const request = cycleRequest(settings, {
      token: "t",
      count: 5,
      candidates: ["1"],
      open: false,
      prunes: "",
      entries: [],
    });
    expect(request).toMatchObject({ token: "t", count: 5, leaseMs: 30_000, peek: 40, workerName: "w" });
  });
});
