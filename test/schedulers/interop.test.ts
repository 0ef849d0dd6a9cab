/**
 * Job schedulers shared with the real bullmq@6.7.0: the same definition stores the same hash and first
 * iteration on both sides, both libraries read each other's schedulers the same way (DST included),
 * and a schedule keeps going at the same millis whichever worker takes its iterations, or both in turn.
 */
import type { Job as BullJob, RepeatOptions as BullRepeatOptions } from "bullmq";
import { describe, expect, it } from "vitest";
import type { ActiveJob, RepeatOptions } from "../../core/index.ts";
import { interopPeers, waitFor } from "../support/bullmq-peer.ts";
import { nimbusWorker, runLoop } from "../support/mixed-fleet.ts";

const peers = interopPeers();

/** A scheduler hash and its pending iteration as stored, clock-dependent values blanked. */
async function stored(io: ReturnType<typeof peers>, queue: string, id: string) {
  const scheduler = await io.raw.hgetall(io.key(queue, `repeat:${id}`));
  const next = await io.raw.zscore(io.key(queue, "repeat"), id);
  const job = await io.raw.hgetall(io.key(queue, `repeat:${id}:${next}`));
  const opts = JSON.parse(job.opts as string) as Record<string, unknown>;
  return {
    next,
    scheduler: { ...scheduler, opts: scheduler.opts && JSON.parse(scheduler.opts) },
    job: { ...job, timestamp: "<ms>", delay: "<ms>", opts: { ...opts, timestamp: "<ms>", delay: "<ms>" } },
  };
}

describe("one definition, one layout", () => {
  const definitions: [string, RepeatOptions][] = [
    ["every", { every: 45_000, startDate: Date.parse("2027-02-01T10:00:07Z"), limit: 9 }],
    ["every-offset", { every: 60_000, offset: 1_500 }],
    ["cron", { pattern: "0 30 8 * * 1-5", tz: "Europe/Berlin", endDate: Date.parse("2028-01-01T00:00:00Z") }],
    ["cron-start", { pattern: "15 */2 * * *", startDate: Date.parse("2027-05-05T05:05:05Z") }],
  ];
  it.each(definitions)(
    "%s: nimbusq writes what BullMQ writes, and each reads the other's alike",
    async (id, repeat) => {
      const io = peers("sched-io");
      const template = {
        name: "report",
        data: { to: "ops" },
        opts: { attempts: 3, removeOnComplete: 5, priority: 2 },
      };
      await io.bullQueue("bull").upsertJobScheduler(id, repeat as BullRepeatOptions, template);
      await io.queue("nimbus").upsertJobScheduler(id, repeat, template);
      expect(await stored(io, "nimbus", id)).toEqual(await stored(io, "bull", id));
      for (const queue of ["bull", "nimbus"]) {
        const theirs = await io.bullQueue(queue).getJobScheduler(id);
        expect(await io.queue(queue).getJobScheduler(id)).toEqual(JSON.parse(JSON.stringify(theirs)));
        expect(await io.queue(queue).getJobSchedulers()).toEqual(
          JSON.parse(JSON.stringify(await io.bullQueue(queue).getJobSchedulers())),
        );
      }
    },
  );

  it("both compute the same first run across daylight-saving switches (New York, Berlin)", async () => {
    const io = peers("sched-dst");
    const cases: [string, BullRepeatOptions, string][] = [
      [
        "ny",
        { pattern: "30 2 * * *", tz: "America/New_York", startDate: Date.parse("2027-03-13T12:00:00Z") },
        "2027-03-14T07:30:00.000Z",
      ],
      [
        "ny-fall",
        { pattern: "30 1 * * *", tz: "America/New_York", startDate: Date.parse("2027-11-06T12:00:00Z") },
        "2027-11-07T05:30:00.000Z",
      ],
      [
        "berlin",
        { pattern: "30 2 * * *", tz: "Europe/Berlin", startDate: Date.parse("2027-03-27T12:00:00Z") },
        "2027-03-28T01:30:00.000Z",
      ],
      [
        "berlin-fall",
        { pattern: "30 2 * * *", tz: "Europe/Berlin", startDate: Date.parse("2027-10-30T12:00:00Z") },
        "2027-10-31T00:30:00.000Z",
      ],
    ];
    for (const [id, repeat, expected] of cases) {
      const bull = await io.bullQueue("bull").upsertJobScheduler(id, repeat);
      const mine = await io.queue("nimbus").upsertJobScheduler(id, repeat as RepeatOptions);
      const theirs = await io.bullQueue("bull").getJobScheduler(id);
      expect(new Date(theirs?.next as number).toISOString()).toBe(expected);
      expect((await io.queue("nimbus").getJobScheduler(id))?.next).toBe(theirs?.next);
      expect(mine?.id).toBe(bull?.id);
    }
  });
});

interface Run {
  id: string;
  millis: number;
  count: unknown;
}

const millisOf = (id: string) => Number(id.slice(id.lastIndexOf(":") + 1));
const run = (job: ActiveJob | BullJob): Run => ({
  id: job.id as string,
  millis: millisOf(job.id as string),
  count: ((job.opts as Record<string, unknown>).repeat as { count?: number } | undefined)?.count,
});

function nimbusRuns(io: ReturnType<typeof peers>, queue: string) {
  const runs: Run[] = [];
  const loop = runLoop(
    io,
    nimbusWorker(io, queue, async (job) => {
      runs.push(run(job));
    }),
  );
  return { runs, stop: loop.stop };
}

function bullRuns(io: ReturnType<typeof peers>, queue: string) {
  const runs: Run[] = [];
  const recording = io.worker(queue, (job) => {
    runs.push(run(job));
  });
  return { runs, stop: () => recording.worker.close() };
}

const upsert = (
  io: ReturnType<typeof peers>,
  side: "bullmq" | "nimbusq",
  id: string,
  repeat: RepeatOptions,
) =>
  side === "bullmq"
    ? io.bullQueue("q").upsertJobScheduler(id, repeat as BullRepeatOptions, { data: { side } })
    : io.queue("q").upsertJobScheduler(id, repeat, { data: { side } });

describe("a schedule goes on whichever worker takes its iterations", () => {
  const pairs: ["bullmq" | "nimbusq", "bullmq" | "nimbusq"][] = [
    ["bullmq", "nimbusq"],
    ["nimbusq", "bullmq"],
  ];
  it.each(pairs)(
    "made by %s, every 500 ms, taken by %s: the same millis, one run each",
    async (maker, taker) => {
      const io = peers("sched-run");
      const start = Math.ceil((Date.now() + 700) / 500) * 500;
      await upsert(io, maker, "tick", { every: 500, startDate: start });
      const worker = taker === "nimbusq" ? nimbusRuns(io, "q") : bullRuns(io, "q");
      await waitFor(() => worker.runs.length >= 4, "four iterations", 10_000);
      await worker.stop();
      expect(worker.runs.slice(0, 4)).toEqual(
        [0, 1, 2, 3].map((k) => ({
          id: `repeat:tick:${start + k * 500}`,
          millis: start + k * 500,
          count: k + 1,
        })),
      );
      const scheduler = await io.bullQueue("q").getJobScheduler("tick");
      expect(scheduler?.iterationCount).toBe(worker.runs.length + 1);
      expect(scheduler?.next).toBe(start + worker.runs.length * 500);
    },
  );

  it.each(pairs)("made by %s, cron every second, taken by %s: consecutive seconds", async (maker, taker) => {
    const io = peers("sched-cron");
    await upsert(io, maker, "secs", { pattern: "*/1 * * * * *" });
    const worker = taker === "nimbusq" ? nimbusRuns(io, "q") : bullRuns(io, "q");
    await waitFor(() => worker.runs.length >= 3, "three iterations", 10_000);
    await worker.stop();
    const [first, ...rest] = worker.runs.slice(0, 3);
    expect(first?.millis ? first.millis % 1000 : -1).toBe(0);
    expect(rest.map((r) => r.millis - (first?.millis ?? 0))).toEqual([1000, 2000]);
    for (const { millis } of worker.runs.slice(0, 2)) {
      const opts = await io.raw.hget(io.key("q", `repeat:secs:${millis}`), "opts");
      expect(JSON.parse(opts as string).prevMillis).toBe(millis);
    }
  });

  it("hands over between a BullMQ worker and nimbusq's, both ways, without a gap or a repeat", async () => {
    const io = peers("sched-hand");
    const start = Math.ceil((Date.now() + 700) / 1000) * 1000;
    await upsert(io, "bullmq", "tick", { every: 1000, startDate: start });
    const runs: Run[] = [];
    for (const side of ["bullmq", "nimbusq", "bullmq"] as const) {
      const worker = side === "nimbusq" ? nimbusRuns(io, "q") : bullRuns(io, "q");
      const before = runs.length;
      await waitFor(() => worker.runs.length >= 2, `two iterations on ${side}`, 10_000);
      await worker.stop();
      runs.push(...worker.runs);
      expect(runs.length).toBeGreaterThan(before);
    }
    const millis = runs.map((r) => r.millis).sort((a, b) => a - b);
    expect(new Set(millis).size).toBe(millis.length);
    expect(millis).toEqual(millis.map((_, k) => start + k * 1000));
  });
});
