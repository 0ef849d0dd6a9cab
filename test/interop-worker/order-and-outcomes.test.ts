/**
 * Jobs of every kind added by a real BullMQ 6.7.0 Queue run on nimbusq's Worker in the order a real
 * BullMQ Worker runs them, and end with the same outcomes: the same set goes through both (each under
 * its own prefix, so ids match) and what each left behind, as BullMQ's Queue reads it, must be equal.
 */
import { type JobsOptions as BullJobsOptions, UnrecoverableError as BullUnrecoverableError } from "bullmq";
import { describe, expect, it } from "vitest";
import { UnrecoverableError } from "../../core/index.ts";
import { interopPeers, type RecordedEvent } from "../support/bullmq-peer.ts";
import {
  blurDue,
  byJob,
  delivered,
  type EitherJob,
  finished,
  outcomes,
  processWith,
  type Run,
  recordAll,
  type Side,
  sides,
} from "../support/mixed-fleet.ts";

const peers = interopPeers();

/** Fails the first attempt of "retry…" jobs, always fails "fails…" jobs, and so on by name. */
async function processor(job: EitherJob): Promise<unknown> {
  const { name } = job;
  if (name.includes("retry") && job.attemptsMade === 0) throw new Error(`${name} failed once`);
  if (name.startsWith("fails") || name.startsWith("backoff-exp")) throw new Error(`${name} always fails`);
  if (name.startsWith("backoff-fixed") && job.attemptsMade < 2)
    throw new Error(`${name} attempt ${job.attemptsMade}`);
  if (name === "unrecoverable") throw new UnrecoverableError("give up at once");
  // A processor written for BullMQ throws BullMQ's class: nimbusq honours it as BullMQ does (by name).
  if (name === "unrecoverable-bullmq") throw new BullUnrecoverableError("bullmq's give up");
  if (name === "returns-undefined") return undefined;
  if (name === "progress-logs") {
    await job.updateProgress(50);
    await job.log("first line");
    await job.updateProgress({ stage: "done", pct: 100 });
    await job.log("second line");
    return { ok: true, list: [1, "two"] };
  }
  return { name, attempt: job.attemptsMade };
}

interface Outcome {
  runs: Run[];
  log: RecordedEvent[];
  jobs: Record<string, unknown>;
  keys: Record<string, number>;
}

describe("nimbusq's Worker takes BullMQ's jobs in BullMQ's order, with BullMQ's outcomes", () => {
  it("standard, lifo, prioritized, due delayed, custom id, deduplicated, retried and failing jobs", async () => {
    const now = Date.now();
    const set: [string, BullJobsOptions][] = [
      ["std-1", {}],
      ["prio-5", { priority: 5 }],
      ["std-2", {}],
      ["lifo-1", { lifo: true }],
      ["prio-1", { priority: 1 }],
      ["retry-now", { attempts: 2 }],
      ["lifo-retry", { lifo: true, attempts: 2 }],
      ["prio-retry", { priority: 1, attempts: 2 }],
      // Already due when added: promoted by the first fetch, in due order.
      ["due-late", { delay: 5000, timestamp: now - 10_000 }],
      ["due-early", { delay: 1000, timestamp: now - 10_000 }],
      ["due-prio", { delay: 1000, priority: 2, timestamp: now - 10_000 }],
      ["custom", { jobId: "custom-1" }],
      ["dedup", { deduplication: { id: "d" } }],
      ["dedup", { deduplication: { id: "d" } }],
      ["dedup-ttl", { deduplication: { id: "t", ttl: 60_000 } }],
      ["unrecoverable", { attempts: 3 }],
      ["fails", { attempts: 2, stackTraceLimit: 1 }],
      ["fails-no-trace", { stackTraceLimit: 0 }],
      ["remove-done", { removeOnComplete: true }],
      ["returns-undefined", {}],
      ["progress-logs", { keepLogs: 5 }],
      ["unrecoverable-bullmq", { attempts: 3 }],
    ];
    const results: Partial<Record<Side, Outcome>> = {};
    for (const side of sides) {
      const io = peers(side);
      const log = await recordAll(io, "q");
      const queue = io.bullQueue("q");
      const ids: string[] = [];
      for (const [name, opts] of set) ids.push((await queue.add(name, { name }, opts)).id as string);
      const runs = processWith(io, side, "q", processor);
      await finished(io, "q", 20);
      await delivered(io, "q", log);
      results[side] = {
        runs,
        log,
        jobs: await outcomes(io, "q", [...new Set(ids)]),
        keys: {
          dedupOwner: await io.raw.exists(io.key("q", "de:d")),
          dedupTtl: await io.raw.exists(io.key("q", "de:t")),
          active: await io.raw.llen(io.key("q", "active")),
        },
      };
    }
    const ours = results.nimbusq as Outcome;
    const theirs = results.bullmq as Outcome;
    const order = (runs: Run[]) => runs.map((r) => `${r.name}#${r.attemptsMade}`);
    expect(order(ours.runs)).toEqual(order(theirs.runs));
    expect(order(theirs.runs)).toEqual([
      "lifo-retry#0",
      "lifo-retry#1",
      "lifo-1#0",
      "std-1#0",
      "std-2#0",
      "retry-now#0",
      "custom#0",
      "dedup#0",
      "dedup-ttl#0",
      "unrecoverable#0",
      "fails#0",
      "fails-no-trace#0",
      "remove-done#0",
      "returns-undefined#0",
      "progress-logs#0",
      "unrecoverable-bullmq#0",
      "due-early#0",
      "due-late#0",
      "retry-now#1",
      "fails#1",
      "prio-1#0",
      "prio-retry#0",
      "prio-retry#1",
      "due-prio#0",
      "prio-5#0",
    ]);
    expect(ours.jobs).toEqual(theirs.jobs);
    expect(ours.keys).toEqual(theirs.keys);
    expect(ours.keys).toEqual({ dedupOwner: 0, dedupTtl: 1, active: 0 });
    // The whole stream, event by event, as QueueEvents delivered it.
    expect(blurDue(ours.log)).toEqual(blurDue(theirs.log));
    expect(ours.jobs["1"]).toMatchObject({ state: "completed", returnvalue: { name: "std-1", attempt: 0 } });
    expect(ours.jobs["16"]).toMatchObject({
      state: "failed",
      failedReason: "give up at once",
      attemptsMade: 1,
      stacktrace: ["UnrecoverableError: give up at once"],
    });
    expect(ours.jobs["17"]).toMatchObject({
      state: "failed",
      attemptsMade: 2,
      stacktrace: ["Error: fails always fails"],
    });
    expect(ours.jobs["18"]).toMatchObject({ state: "failed", stacktrace: [] });
    expect(ours.jobs["19"]).toBe("gone");
    expect(ours.jobs["22"]).toMatchObject({
      state: "failed",
      attemptsMade: 1,
      failedReason: "bullmq's give up",
    });
    expect(ours.jobs["21"]).toMatchObject({
      progress: { stage: "done", pct: 100 },
      logs: ["first line", "second line"],
      returnvalue: { ok: true, list: [1, "two"] },
    });
  });

  it("future delays and backoffs (fixed, exponential, prioritized): never early, same outcomes", async () => {
    const set: [string, BullJobsOptions][] = [
      ["later", { delay: 400 }],
      ["backoff-fixed", { attempts: 3, backoff: { type: "fixed", delay: 300 } }],
      ["backoff-exp", { attempts: 3, backoff: { type: "exponential", delay: 150 } }],
      ["backoff-prio-retry", { priority: 3, attempts: 2, backoff: 200 }],
      ["std", {}],
    ];
    const results: Partial<Record<Side, Outcome>> = {};
    for (const side of sides) {
      const io = peers(side);
      const log = await recordAll(io, "q");
      const queue = io.bullQueue("q");
      for (const [name, opts] of set) await queue.add(name, { name }, opts);
      const runs = processWith(io, side, "q", processor);
      await finished(io, "q", set.length);
      await delivered(io, "q", log);
      const ids = set.map((_, i) => String(i + 1));
      results[side] = { runs, log, jobs: await outcomes(io, "q", ids), keys: {} };
      // Each run starts once its job is due: the add's due time, or the backoff's (the `delayed` event).
      const events = byJob(log);
      for (const id of ids) {
        const dues = log.filter((e) => e.event === "delayed" && e.jobId === id).map((e) => Number(e.delay));
        const starts = runs.filter((r) => r.id === id).map((r) => r.startedAt);
        expect(starts.length, `${side} ${id}`).toBe(
          (events[id] ?? []).filter((e) => e.event === "active").length,
        );
        const retried = dues.length === starts.length ? starts : starts.slice(1);
        for (const [k, due] of dues.entries()) {
          expect(retried[k], `${side} job ${id} run ${k}`).toBeGreaterThanOrEqual(due);
          expect((retried[k] ?? 0) - due, `${side} job ${id} run ${k} lateness`).toBeLessThan(400);
        }
      }
    }
    const ours = results.nimbusq as Outcome;
    const theirs = results.bullmq as Outcome;
    const perJob = (runs: Run[]) => {
      const out: Record<string, number[]> = {};
      for (const r of runs) out[r.name] = [...(out[r.name] ?? []), r.attemptsMade];
      return out;
    };
    expect(perJob(ours.runs)).toEqual(perJob(theirs.runs));
    expect(perJob(ours.runs)).toEqual({
      later: [0],
      "backoff-fixed": [0, 1, 2],
      "backoff-exp": [0, 1, 2],
      "backoff-prio-retry": [0, 1],
      std: [0],
    });
    expect(ours.jobs).toEqual(theirs.jobs);
    expect(byJob(ours.log)).toEqual(byJob(theirs.log));
    expect(ours.jobs["3"]).toMatchObject({
      state: "failed",
      attemptsMade: 3,
      attemptsStarted: 3,
      failedReason: "backoff-exp always fails",
      stacktrace: Array(3).fill("Error: backoff-exp always fails"),
    });
    expect((byJob(ours.log)["3"] ?? []).map((e) => e.event)).toEqual([
      "added",
      "waiting",
      "active",
      "delayed",
      "waiting",
      "active",
      "delayed",
      "waiting",
      "active",
      "failed",
      "retries-exhausted",
    ]);
  });
});
