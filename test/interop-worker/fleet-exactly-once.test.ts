/**
 * Exactly once, for any settings. A fleet of workers shares one queue while a few of its jobs run
 * for 2.5 leases: every job we hold — running, leased but not started, finished but not acked — must
 * keep its lock until its ack lands, so no stalled check (BullMQ's or ours) ever takes a job back and
 * every side effect happens once. First a real bullmq@6.7.0 Worker beside a nimbusq run loop, then
 * nimbusq workers only, under several combinations of batchSize, concurrency and leaseMs.
 *
 * A private stack, so the REST server's declared-keys mode can be read back (`keyViolations`).
 */
import { Queue as BullQueue, QueueEvents as BullQueueEvents, Worker as BullWorker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, LeaseLostError, Queue, Worker } from "../../core/index.ts";
import { overRest, type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { misplacedJobs } from "../support/state-walk.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack?.stop());

/** Resolves after `ms`, or at once when the signal fires. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

type DeclaredKeysStats = { keyViolations?: number; keyLockingCalls?: number };

/** Undeclared keys touched by flagged scripts so far (0 while the REST server has no such mode). */
function keyViolations(): number {
  return (stack.rest.stats() as DeclaredKeysStats).keyViolations ?? 0;
}

/**
 * Checks the REST server's declared-keys count since `violationsBefore`: no flagged script touched an
 * undeclared key, and (where the server counts them) flagged scripts did run, so the check was not empty.
 */
function expectDeclaredKeys(violationsBefore: number): void {
  if (!overRest()) return; // the REST server's count: over TCP there is none
  expect(keyViolations() - violationsBefore, "undeclared keys touched by flagged scripts").toBe(0);
  const flagged = (stack.rest.stats() as DeclaredKeysStats).keyLockingCalls;
  if (flagged !== undefined) expect(flagged, "runs of scripts flagged allow-key-locking").toBeGreaterThan(0);
}

function bullConnection() {
  return stack.bullConnection();
}

/** Every processor start, per job id: who ran it. */
class Ledger {
  readonly runs = new Map<string, string[]>();

  note(id: string, by: string): void {
    this.runs.set(id, [...(this.runs.get(id) ?? []), by]);
  }

  /** The jobs that ran more than once, as `id: runner,runner`. */
  repeated(): string[] {
    return [...this.runs].filter(([, by]) => by.length > 1).map(([id, by]) => `${id}: ${by.join(",")}`);
  }
}

/** Whether an error is about a lost lock or lease (either library's wording). */
function isLockError(error: Error): boolean {
  return (
    error instanceof LeaseLostError || error.name === "LeaseLostError" || /lock|lease/i.test(error.message)
  );
}

/** Polls until `total` jobs are completed or failed, or `timeoutMs` has passed. */
async function settle(
  queuePrefix: string,
  total: number,
  timeoutMs: number,
): Promise<{ completed: number; failed: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [completed, failed] = await Promise.all([
      stack.direct.zcard(`${queuePrefix}:completed`),
      stack.direct.zcard(`${queuePrefix}:failed`),
    ]);
    if (completed + failed >= total || Date.now() > deadline) return { completed, failed };
    await pause(100);
  }
}

/** What Redis holds for each job that says it was not started or finished exactly once by `runner`. */
async function oddHashes(queuePrefix: string, ids: readonly string[], ledger: Ledger): Promise<string[]> {
  const pipeline = stack.direct.pipeline();
  for (const id of ids) pipeline.hmget(`${queuePrefix}:${id}`, "ats", "atm", "stc", "returnvalue");
  for (const id of ids) pipeline.exists(`${queuePrefix}:${id}:lock`);
  const replies = ((await pipeline.exec()) ?? []).map(([, value]) => value);
  const odd: string[] = [];
  ids.forEach((id, i) => {
    const [ats, atm, stc, returnvalue] = replies[i] as (string | null)[];
    const lock = replies[ids.length + i] as number;
    const by = ledger.runs.get(id)?.[0];
    if (ats !== "1" || atm !== "1" || stc !== null || returnvalue !== JSON.stringify({ by }) || lock !== 0) {
      odd.push(`${id}: ats=${ats} atm=${atm} stc=${stc} returnvalue=${returnvalue} by=${by} lock=${lock}`);
    }
  });
  return odd;
}

/** Job n sleeps 2.5 leases when `n % every === every / 2` (rounded down), a few ms otherwise. */
function durationOf(n: number, every: number, leaseMs: number): number {
  return n % every === Math.floor(every / 2) ? 2.5 * leaseMs : 1 + (n % 4);
}

/** Stops a loop that calls `step` every `everyMs` until the signal fires; errors go to `onError`. */
async function every(
  everyMs: number,
  signal: AbortSignal,
  step: () => Promise<unknown>,
  onError: (error: Error) => void,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await step();
    } catch (error) {
      onError(error as Error);
    }
    await pause(everyMs, signal);
  }
}

describe("a real BullMQ worker and a nimbusq run loop on one queue, some jobs outliving the lease", () => {
  it("2,000 jobs, 1 in 400 sleeping 2.5 × leaseMs: each side effect once, no stall, no lock error", async () => {
    const total = 2000;
    const leaseMs = 1500;
    const longEvery = 400;
    const prefix = uniquePrefix("mixed");
    const qp = `${prefix}:q`;
    const violationsBefore = keyViolations();
    const closers: (() => Promise<unknown>)[] = [];
    try {
      const producer = new BullQueue("q", { connection: bullConnection(), prefix });
      closers.push(() => producer.close());
      const ids: string[] = [];
      for (let from = 0; from < total; from += 500) {
        const added = await producer.addBulk(
          Array.from({ length: 500 }, (_, i) => ({ name: "work", data: { n: from + i } })),
        );
        ids.push(...added.map((job) => job.id as string));
      }
      expect(ids).toHaveLength(total);
      expect(ids.filter((_, n) => durationOf(n, longEvery, leaseMs) > leaseMs)).toHaveLength(5);

      const queueEvents = new BullQueueEvents("q", {
        connection: bullConnection(),
        prefix,
        lastEventId: "0-0",
      });
      closers.push(() => queueEvents.close());
      const streamStalled: string[] = [];
      queueEvents.on("stalled", ({ jobId }) => streamStalled.push(jobId));
      await queueEvents.waitUntilReady();

      const ledger = new Ledger();
      const work = async (id: string, n: number, by: string) => {
        ledger.note(id, by);
        await pause(durationOf(n, longEvery, leaseMs));
        return { by };
      };

      const bullStalled: string[] = [];
      const bullErrors: string[] = [];
      const bull = new BullWorker(
        "q",
        (job) => work(job.id as string, (job.data as { n: number }).n, "bullmq"),
        {
          connection: bullConnection(),
          prefix,
          concurrency: 10,
          stalledInterval: 1000,
          maxStalledCount: 1,
        },
      );
      closers.push(() => bull.close(true));
      bull.on("stalled", (jobId) => bullStalled.push(jobId));
      bull.on("error", (error) => bullErrors.push(`error: ${error.message}`));
      bull.on("failed", (job, error) => bullErrors.push(`failed ${job?.id}: ${error.message}`));

      const nimbusStalled: string[] = [];
      const nimbusErrors: Error[] = [];
      const nimbus = new Worker(
        "q",
        (job: ActiveJob) => work(job.id, (job.data as { n: number }).n, "nimbusq"),
        {
          redis: stack.redis,
          prefix,
          batchSize: 50,
          concurrency: 10,
          leaseMs,
          stalledInterval: 1000,
          maxStalledCount: 1,
          poll: { minMs: 10, maxMs: 50 },
        },
      );
      nimbus.on("stalled", (jobId) => nimbusStalled.push(jobId));
      nimbus.on("error", (error) => nimbusErrors.push(error));
      nimbus.on("failed", (job, error) =>
        nimbusErrors.push(new Error(`failed ${job?.id}: ${error.message}`)),
      );

      const stop = new AbortController();
      const loop = nimbus.run({ signal: stop.signal });
      // Our own stalled check runs beside BullMQ's, as the sweeper would.
      const checker = every(
        500,
        stop.signal,
        () => nimbus.recoverStalled(),
        (e) => nimbusErrors.push(e),
      );
      closers.push(async () => {
        stop.abort();
        await Promise.all([loop, checker]);
      });

      const { completed, failed } = await settle(qp, total, 45_000);
      stop.abort();
      await Promise.all([loop, checker]);
      await bull.close();

      const repeated = ledger.repeated();
      expect({ ranMoreThanOnce: repeated.length, examples: repeated.slice(0, 10) }).toEqual({
        ranMoreThanOnce: 0,
        examples: [],
      });
      expect({ completed, failed, started: ledger.runs.size }).toEqual({
        completed: total,
        failed: 0,
        started: total,
      });
      expect({ bullStalled, nimbusStalled, streamStalled }).toEqual({
        bullStalled: [],
        nimbusStalled: [],
        streamStalled: [],
      });
      const lockErrors = [
        ...bullErrors.filter((text) => /lock/i.test(text)),
        ...nimbusErrors.filter(isLockError).map((e) => `${e.name}: ${e.message}`),
      ];
      expect(lockErrors.slice(0, 10)).toEqual([]);
      expect({ bullErrors, nimbusErrors: nimbusErrors.map((e) => `${e.name}: ${e.message}`) }).toEqual({
        bullErrors: [],
        nimbusErrors: [],
      });
      const share = { bullmq: 0, nimbusq: 0 };
      for (const [, [by]] of ledger.runs) share[by as keyof typeof share] += 1;
      expect(share.bullmq, "jobs run by BullMQ").toBeGreaterThan(total / 20);
      expect(share.nimbusq, "jobs run by nimbusq").toBeGreaterThan(total / 20);
      const stalledInStream = (await stack.direct.xrange(`${qp}:events`, "-", "+")).filter(
        ([, fields]) => fields[1] === "stalled",
      );
      expect(stalledInStream).toEqual([]);
      expect(await stack.direct.llen(`${qp}:active`)).toBe(0);
      expect(await misplacedJobs(stack.direct, qp, ids)).toEqual([]);
      expect((await oddHashes(qp, ids, ledger)).slice(0, 10)).toEqual([]);
      expectDeclaredKeys(violationsBefore);
    } finally {
      for (const close of closers.reverse()) await close().catch(() => {});
    }
  }, 60_000);
});

interface FleetCase {
  name: string;
  workers: number;
  batchSize: number;
  concurrency: number;
  leaseMs: number;
  jobs: number;
  /** Every this many jobs, one sleeps 2.5 × leaseMs. */
  longEvery: number;
  loop: "run" | "drain";
}

const fleets: FleetCase[] = [
  {
    name: "two drain loops, batchSize 50, concurrency 10, leaseMs 1500, 4 of 1,000 jobs long",
    workers: 2,
    batchSize: 50,
    concurrency: 10,
    leaseMs: 1500,
    jobs: 1000,
    longEvery: 250,
    loop: "drain",
  },
  {
    name: "two run loops, batchSize 50, concurrency 10, leaseMs 1500, 4 of 1,000 jobs long",
    workers: 2,
    batchSize: 50,
    concurrency: 10,
    leaseMs: 1500,
    jobs: 1000,
    longEvery: 250,
    loop: "run",
  },
  {
    name: "two run loops, batchSize 5 below concurrency 20, leaseMs 1000",
    workers: 2,
    batchSize: 5,
    concurrency: 20,
    leaseMs: 1000,
    jobs: 600,
    longEvery: 150,
    loop: "run",
  },
  {
    name: "two run loops, batchSize 100 far above concurrency 3, leaseMs 1000, 1 in 30 jobs longer than the lease",
    workers: 2,
    batchSize: 100,
    concurrency: 3,
    leaseMs: 1000,
    jobs: 300,
    longEvery: 30,
    loop: "run",
  },
  {
    name: "three run loops, batchSize 20, concurrency 5, leaseMs 1000",
    workers: 3,
    batchSize: 20,
    concurrency: 5,
    leaseMs: 1000,
    jobs: 600,
    longEvery: 200,
    loop: "run",
  },
];

/** `worker.drain` again and again (as invocations of a function would) until the signal fires. */
async function drainLoop(
  worker: Worker,
  signal: AbortSignal,
  onError: (error: Error) => void,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const summary = await worker.drain({ signal });
      if (summary.leased === 0) await pause(20, signal);
    } catch (error) {
      onError(error as Error);
      await pause(20, signal);
    }
  }
}

describe("nimbusq workers only, with our own stalled recovery every 500 ms", () => {
  it.each(fleets)(
    "$name: each side effect once, no stall, no lock error, all completed",
    async (fleet) => {
      const prefix = uniquePrefix("fleet");
      const qp = `${prefix}:q`;
      const violationsBefore = keyViolations();
      const queue = new Queue("q", { redis: stack.redis, prefix });
      const ids: string[] = [];
      for (let from = 0; from < fleet.jobs; from += 500) {
        const count = Math.min(500, fleet.jobs - from);
        const added = await queue.addBulk(
          Array.from({ length: count }, (_, i) => ({
            name: "work",
            data: { n: from + i },
            // A third grouped: nimbusq's workers serve both kinds at once.
            opts: (from + i) % 3 === 0 ? { group: { id: `tenant-${(from + i) % 5}` } } : {},
          })),
        );
        ids.push(...added.map((job) => job.id));
      }
      const longJobs = ids.filter((_, n) => durationOf(n, fleet.longEvery, fleet.leaseMs) > fleet.leaseMs);
      expect(longJobs.length).toBe(Math.floor(fleet.jobs / fleet.longEvery));

      const ledger = new Ledger();
      const stalled: string[] = [];
      const errors: Error[] = [];
      const workers = Array.from({ length: fleet.workers }, (_, w) => {
        const by = `w${w}`;
        const worker = new Worker(
          "q",
          async (job: ActiveJob): Promise<unknown> => {
            ledger.note(job.id, by);
            await pause(durationOf((job.data as { n: number }).n, fleet.longEvery, fleet.leaseMs));
            return { by };
          },
          {
            redis: stack.redis,
            prefix,
            batchSize: fleet.batchSize,
            concurrency: fleet.concurrency,
            leaseMs: fleet.leaseMs,
            stalledInterval: 500,
            maxStalledCount: 1,
            poll: { minMs: 10, maxMs: 50 },
          },
        );
        worker.on("stalled", (jobId) => stalled.push(`${by}: ${jobId}`));
        worker.on("error", (error) => errors.push(error));
        worker.on("failed", (job, error) => errors.push(new Error(`failed ${job?.id}: ${error.message}`)));
        return worker;
      });

      const stop = new AbortController();
      const noteError = (error: Error) => errors.push(error);
      const running = workers.flatMap((worker) => [
        fleet.loop === "run"
          ? worker.run({ signal: stop.signal })
          : drainLoop(worker, stop.signal, noteError),
        every(500, stop.signal, () => worker.recoverStalled(), noteError),
      ]);
      let settled: { completed: number; failed: number };
      try {
        settled = await settle(qp, fleet.jobs, 35_000);
      } finally {
        stop.abort();
        await Promise.all(running);
      }

      const repeated = ledger.repeated();
      expect({ ranMoreThanOnce: repeated.length, examples: repeated.slice(0, 10) }).toEqual({
        ranMoreThanOnce: 0,
        examples: [],
      });
      expect({ ...settled, started: ledger.runs.size }).toEqual({
        completed: fleet.jobs,
        failed: 0,
        started: fleet.jobs,
      });
      expect(stalled.slice(0, 10)).toEqual([]);
      const described = errors.map((e) => `${e.name}: ${e.message}`);
      expect(errors.filter(isLockError).length, `lock errors: ${described.slice(0, 5).join(" | ")}`).toBe(0);
      expect(described.slice(0, 10)).toEqual([]);
      const busy = workers.map((_, w) => [...ledger.runs.values()].filter(([by]) => by === `w${w}`).length);
      for (const [w, count] of busy.entries()) expect(count, `jobs run by worker ${w}`).toBeGreaterThan(0);
      const stalledInStream = (await stack.direct.xrange(`${qp}:events`, "-", "+")).filter(
        ([, fields]) => fields[1] === "stalled",
      );
      expect(stalledInStream.length).toBe(0);
      expect(await stack.direct.llen(`${qp}:active`)).toBe(0);
      expect(await misplacedJobs(stack.direct, qp, ids)).toEqual([]);
      expect((await oddHashes(qp, ids, ledger)).slice(0, 10)).toEqual([]);
      expectDeclaredKeys(violationsBefore);
    },
    50_000,
  );
});
