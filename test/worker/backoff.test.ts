import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../core/job/backoff.ts";

const error = new Error("x");

describe("backoffDelay", () => {
  it("is 0 without a backoff (retry at once)", () => {
    expect(backoffDelay(undefined, { attemptsMade: 1, error, job: {} })).toBe(0);
  });

  it("waits `delay` for fixed, and a number means fixed", () => {
    expect(backoffDelay({ type: "fixed", delay: 1500 }, { attemptsMade: 3, error, job: {} })).toBe(1500);
    expect(backoffDelay(700, { attemptsMade: 1, error, job: {} })).toBe(700);
  });

  it("doubles for exponential: delay, 2×, 4× …", () => {
    const waits = [1, 2, 3, 4].map((attemptsMade) =>
      backoffDelay({ type: "exponential", delay: 1000 }, { attemptsMade, error, job: {} }),
    );
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
  });

  it("lowers the wait by up to jitter × wait", () => {
    const spec = { type: "exponential", delay: 1000, jitter: 0.5 };
    expect(backoffDelay(spec, { attemptsMade: 2, error, job: {}, random: () => 0 })).toBe(2000);
    expect(backoffDelay(spec, { attemptsMade: 2, error, job: {}, random: () => 0.999999 })).toBe(1000);
    expect(backoffDelay(spec, { attemptsMade: 2, error, job: {}, random: () => 0.5 })).toBe(1500);
  });

  it("calls a named custom strategy with BullMQ's arguments; -1 means no retry", () => {
    const calls: unknown[][] = [];
    const strategies = {
      linear: (attemptsMade: number, type: string, err: Error, job: unknown) => {
        calls.push([attemptsMade, type, err, job]);
        return attemptsMade >= 3 ? -1 : attemptsMade * 100;
      },
    };
    const job = { id: "7" };
    expect(backoffDelay({ type: "linear" }, { attemptsMade: 2, error, job, strategies })).toBe(200);
    expect(backoffDelay({ type: "linear" }, { attemptsMade: 3, error, job, strategies })).toBe(-1);
    expect(calls[0]).toEqual([2, "linear", error, job]);
  });

  it("refuses an unknown strategy or a nonsense wait", () => {
    expect(() => backoffDelay({ type: "nope" }, { attemptsMade: 1, error, job: {} })).toThrow(
      /unknown backoff strategy "nope"/,
    );
    expect(() =>
      backoffDelay(
        { type: "bad" },
        { attemptsMade: 1, error, job: {}, strategies: { bad: () => Number.NaN } },
      ),
    ).toThrow(/returned NaN/);
  });
});
