/**
 * The pure timing rules, without Redis: cron next times across daylight-saving changes (as literal
 * instants and as BullMQ 6.7.0's own repeat strategy computes them), when a schedule stops, and when
 * a missing iteration may be made again.
 */
import { defaultRepeatStrategy } from "bullmq";
import { describe, expect, it } from "vitest";
import { cronNext, planNextIteration, shouldRestoreIteration } from "../../core/schedulers/schedule-time.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The planned runs a worker chain makes, each iteration taken `lagMs` after its planned time. */
function chain(pattern: string, tz: string, first: number, runs: number, lagMs = 1500): string[] {
  const out: string[] = [];
  let prev = first;
  for (let count = 1; count < runs; count++) {
    const next = planNextIteration({ pattern, tz, count }, prev, prev + lagMs);
    if (next?.millis === undefined) throw new Error(`no run after ${iso(prev)}`);
    out.push(iso(next.millis) as string);
    prev = next.millis;
  }
  return out;
}

/** The same chain as BullMQ's worker computes it: repeat strategy from max(now, prevMillis). */
function bullChain(pattern: string, tz: string, first: number, runs: number, lagMs = 1500): string[] {
  const out: string[] = [];
  let prev = first;
  for (let i = 1; i < runs; i++) {
    const now = Math.max(prev + lagMs, prev);
    const next = Math.max(defaultRepeatStrategy(now, { pattern, tz }) as number, now);
    out.push(iso(next) as string);
    prev = next;
  }
  return out;
}

describe("cron next times across daylight-saving changes", () => {
  it("America/New_York, spring forward: a 02:30 run that does not exist that day runs at 03:30 EDT", () => {
    const first = at("2027-03-13T07:30:00Z"); // 02:30 EST, the day before the switch
    expect(chain("30 2 * * *", "America/New_York", first, 4)).toEqual([
      "2027-03-14T07:30:00.000Z", // 03:30 EDT: 02:30 is skipped that night
      "2027-03-15T06:30:00.000Z", // 02:30 EDT
      "2027-03-16T06:30:00.000Z",
    ]);
    expect(chain("30 2 * * *", "America/New_York", first, 4)).toEqual(
      bullChain("30 2 * * *", "America/New_York", first, 4),
    );
  });

  it("America/New_York, fall back: a 01:30 run happens once, in EDT; hourly runs skip no real hour", () => {
    const first = at("2027-11-06T05:30:00Z");
    expect(chain("30 1 * * *", "America/New_York", first, 3)).toEqual([
      "2027-11-07T05:30:00.000Z", // 01:30 EDT, the first of the two 01:30s
      "2027-11-08T06:30:00.000Z", // 01:30 EST
    ]);
    const hourly = chain("0 * * * *", "America/New_York", at("2027-03-14T05:00:00Z"), 5);
    expect(hourly).toEqual([
      "2027-03-14T06:00:00.000Z", // 01:00 EST
      "2027-03-14T07:00:00.000Z", // 03:00 EDT, one hour later in real time
      "2027-03-14T08:00:00.000Z",
      "2027-03-14T09:00:00.000Z",
    ]);
    expect(hourly).toEqual(bullChain("0 * * * *", "America/New_York", at("2027-03-14T05:00:00Z"), 5));
  });

  it("Europe/Berlin: 02:30 in spring is 03:30 CEST; in autumn the first 02:30 (CEST); 09:00 stays 09:00", () => {
    expect(chain("30 2 * * *", "Europe/Berlin", at("2027-03-27T01:30:00Z"), 3)).toEqual([
      "2027-03-28T01:30:00.000Z", // 03:30 CEST
      "2027-03-29T00:30:00.000Z", // 02:30 CEST
    ]);
    expect(chain("30 2 * * *", "Europe/Berlin", at("2027-10-30T00:30:00Z"), 3)).toEqual([
      "2027-10-31T00:30:00.000Z", // 02:30 CEST, before the clocks go back
      "2027-11-01T01:30:00.000Z", // 02:30 CET
    ]);
    expect(chain("0 9 * * *", "Europe/Berlin", at("2027-03-27T08:00:00Z"), 3)).toEqual([
      "2027-03-28T07:00:00.000Z",
      "2027-03-29T07:00:00.000Z",
    ]);
  });

  it("agrees with BullMQ's repeat strategy over weeks of runs around each switch", () => {
    const cases: [string, string, string][] = [
      ["*/20 * * * *", "America/New_York", "2027-03-14T05:00:00Z"],
      ["15 2 * * *", "America/New_York", "2027-11-05T06:15:00Z"],
      ["0 0,2,3 * * *", "Europe/Berlin", "2027-03-26T23:00:00Z"],
      ["45 2 * * 0", "Europe/Berlin", "2027-10-17T00:45:00Z"],
      ["0 */3 * * *", "Europe/Berlin", "2027-10-30T21:00:00Z"],
      ["30 */1 * * * *", "America/New_York", "2027-11-07T05:58:30Z"],
    ];
    for (const [pattern, tz, first] of cases) {
      expect(chain(pattern, tz, at(first), 40), `${pattern} ${tz}`).toEqual(
        bullChain(pattern, tz, at(first), 40),
      );
    }
  });

  it("takes 6-field patterns with seconds, and starts no earlier than startDate", () => {
    expect(cronNext("*/1 * * * * *", {}, at("2026-12-01T00:00:00.500Z"))).toBe(at("2026-12-01T00:00:01Z"));
    expect(cronNext("*/1 * * * * *", {}, at("2026-12-01T00:00:01Z"))).toBe(at("2026-12-01T00:00:02Z"));
    const startDate = at("2027-01-10T12:00:00Z");
    expect(iso(cronNext("0 6 * * *", { tz: "Europe/Berlin", startDate }, at("2026-12-01T00:00:00Z")))).toBe(
      "2027-01-11T05:00:00.000Z",
    );
    expect(cronNext("0 6 * * *", { endDate: at("2027-01-01T05:00:00Z") }, at("2027-01-01T07:00:00Z"))).toBe(
      undefined,
    );
  });
});

describe("planNextIteration", () => {
  it("stops at the limit and once endDate has passed (BullMQ's rules)", () => {
    expect(planNextIteration({ every: 1000, count: 2, limit: 3 }, undefined, 0)).toEqual({ count: 3 });
    expect(planNextIteration({ every: 1000, count: 3, limit: 3 }, undefined, 0)).toBeUndefined();
    expect(planNextIteration({ every: 1000, count: 1, endDate: 5000 }, undefined, 5000)).toEqual({
      count: 2,
    });
    expect(planNextIteration({ every: 1000, count: 1, endDate: 5000 }, undefined, 5001)).toBeUndefined();
    const pattern = { pattern: "0 * * * *", count: 1, endDate: at("2027-01-01T10:30:00Z") };
    expect(planNextIteration(pattern, at("2027-01-01T09:00:00Z"), at("2027-01-01T09:00:01Z"))).toEqual({
      count: 2,
      millis: at("2027-01-01T10:00:00Z"),
    });
    expect(
      planNextIteration(pattern, at("2027-01-01T10:00:00Z"), at("2027-01-01T10:00:01Z")),
    ).toBeUndefined();
  });

  it("a late or retried iteration plans from now, never a second run for a slot already passed", () => {
    const prev = at("2027-01-01T09:00:00Z");
    // Taken 2.5 hours late: the next run is the next hour still to come, not 10:00.
    expect(iso(planNextIteration({ pattern: "0 * * * *", count: 4 }, prev, prev + 9_000_000)?.millis)).toBe(
      "2027-01-01T12:00:00.000Z",
    );
    // A clock behind the planned time still plans after it.
    expect(iso(planNextIteration({ pattern: "0 * * * *", count: 4 }, prev, prev - 60_000)?.millis)).toBe(
      "2027-01-01T10:00:00.000Z",
    );
  });
});

describe("shouldRestoreIteration", () => {
  const now = at("2027-01-01T10:00:05Z");
  it("restores a missing iteration unless it may have been the last one", () => {
    expect(shouldRestoreIteration({ every: 1000, iterationCount: 3 }, now - 5000, now)).toBe(true);
    expect(shouldRestoreIteration({ every: 1000, iterationCount: 3, limit: 3 }, now - 5000, now)).toBe(false);
    expect(
      shouldRestoreIteration({ every: 1000, iterationCount: 3, endDate: now - 1 }, now - 5000, now),
    ).toBe(false);
    const hourly = { pattern: "0 * * * *", iterationCount: 2 };
    expect(shouldRestoreIteration({ ...hourly, endDate: at("2027-01-01T11:30:00Z") }, now - 5000, now)).toBe(
      true,
    );
    // 10:00 was the last run before endDate: it may have run already.
    expect(shouldRestoreIteration({ ...hourly, endDate: at("2027-01-01T10:30:00Z") }, now - 5000, now)).toBe(
      false,
    );
  });
});
