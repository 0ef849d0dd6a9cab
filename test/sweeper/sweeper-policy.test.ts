/**
 * The sweeper loop's pure policy, without Redis or Lambda: the fan-out's batch size (the workers'
 * registered one first), the invocation's window and lock lifetime, and where event cursors may move
 * after a partly failed publish.
 */
import { describe, expect, it } from "vitest";
import { fanOutBatchSize, passWindow, workersToStart } from "../../core/sweeper/decisions.ts";
import { cursorAdvances, type ForwardedEvent } from "../../core/sweeper/forwarding.ts";
import type { QueueSweep } from "../../core/sweeper/sweep.ts";

function swept(fields: Partial<QueueSweep>): QueueSweep {
  return {
    queue: "q",
    waiting: 0,
    prioritized: 0,
    active: 0,
    paused: false,
    workers: 0,
    promoted: 0,
    restored: [],
    stalled: [],
    events: [],
    ...fields,
  };
}

describe("the fan-out's batch size", () => {
  it("is the workers' registered one, else the configured one, else 10", () => {
    const registered = swept({ workerSettings: { batchSize: 50, concurrency: 10 } });
    expect(fanOutBatchSize(registered, 10)).toBe(50);
    expect(fanOutBatchSize(registered)).toBe(50);
    expect(fanOutBatchSize(swept({}), 25)).toBe(25);
    expect(fanOutBatchSize(swept({}))).toBe(10);
  });

  it("starts one invocation per registered batch: a worker at 50 beside a sweeper at 10 gets 2, not 10", () => {
    const backlog = swept({ waiting: 100, workerSettings: { batchSize: 50, concurrency: 10 } });
    expect(workersToStart(backlog, fanOutBatchSize(backlog, 10), 10)).toBe(2);
    const unregistered = swept({ waiting: 100 });
    expect(workersToStart(unregistered, fanOutBatchSize(unregistered, 10), 10)).toBe(10);
  });
});

describe("an invocation's window", () => {
  it("ends a margin before the next tick or the function's end, whichever is first; the lock half a margin later", () => {
    expect(passWindow(1000, 60_000, 60_000, 2000)).toEqual({ endAt: 59_000, lockUntil: 60_000 });
    expect(passWindow(1000, 30_000, 60_000, 2000)).toEqual({ endAt: 29_000, lockUntil: 30_000 });
    expect(passWindow(1000, 90_000, 10_000, 500)).toEqual({ endAt: 10_500, lockUntil: 10_750 });
  });
});

describe("cursor advances after a publish", () => {
  const event = (queue: string, id: string): ForwardedEvent => ({ queue, event: { id, fields: {} } });
  const events = [
    event("a", "1-0"),
    event("a", "2-0"),
    event("b", "1-0"),
    event("a", "3-0"),
    event("b", "2-0"),
  ];

  it("moves each queue to its last event when all went", () => {
    expect(cursorAdvances(events, [])).toEqual([
      { queue: "a", lastId: "3-0" },
      { queue: "b", lastId: "2-0" },
    ]);
  });

  it("stops a queue before its first failed event (later ones are sent again), other queues unaffected", () => {
    expect(cursorAdvances(events, [3, 1])).toEqual([
      { queue: "a", lastId: "1-0" },
      { queue: "b", lastId: "2-0" },
    ]);
    // A queue whose first event failed does not move at all.
    expect(cursorAdvances(events, [2])).toEqual([{ queue: "a", lastId: "3-0" }]);
  });
});
