import { describe, expect, it } from "vitest";
import { nextDueAt, sleepBeforeNextPass, workersToStart } from "../../core/sweeper/decisions.ts";
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
    stalled: [],
    events: [],
    ...fields,
  } as QueueSweep;
}

describe("the sweeper's pure decisions", () => {
  it("starts ceil(backlog / batchSize) workers minus those running, capped, none when paused", () => {
    expect(workersToStart(swept({ waiting: 25 }), 10, 4)).toBe(3);
    expect(workersToStart(swept({ waiting: 20, prioritized: 5, workers: 2 }), 10, 4)).toBe(1);
    expect(workersToStart(swept({ waiting: 1000 }), 10, 4, 1)).toBe(3);
    expect(workersToStart(swept({ waiting: 5, workers: 3 }), 10, 4)).toBe(0);
    expect(workersToStart(swept({ waiting: 50, paused: true }), 10, 4)).toBe(0);
    expect(workersToStart(swept({}), 10, 4)).toBe(0);
  });

  it("finds the earliest due time across queues and kinds", () => {
    expect(nextDueAt([swept({}), swept({})])).toBeUndefined();
    expect(
      nextDueAt([swept({ nextDelayedAt: 900, nextSchedulerAt: 700 }), swept({ nextStalledCheckAt: 800 })]),
    ).toBe(700);
  });

  it("sleeps until the next due time, stops when it is past the end, and keeps passes apart", () => {
    expect(sleepBeforeNextPass(undefined, 1000, 5000)).toBeUndefined();
    expect(sleepBeforeNextPass(6000, 1000, 5000)).toBeUndefined();
    expect(sleepBeforeNextPass(3000, 1000, 5000)).toBe(2000);
    expect(sleepBeforeNextPass(500, 1000, 5000)).toBe(0);
    expect(sleepBeforeNextPass(1010, 1000, 5000, 990, 200)).toBe(190);
    expect(sleepBeforeNextPass(1500, 1000, 5000, 990, 200)).toBe(500);
  });
});
