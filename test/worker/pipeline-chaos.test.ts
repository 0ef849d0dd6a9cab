/**
 * Chaos on the pipeline: invocations cut short while jobs run (a deadline passing, a stop signal),
 * requests that run twice because their answer was lost (the client retries), requests that never
 * arrive, and a worker that dies while holding jobs. After every step each job is in exactly one state
 * and nothing is left active or locked by a worker that returned; in the end none is lost, and a job
 * runs again only when an earlier run of it was stopped by its worker (its `job.signal` fired) or
 * belonged to the worker that died.
 *
 * A private stack, for fault injection and the REST server's declared-keys count. Over TCP (and on the
 * cluster) the faults are fault proxies' (the same kinds, on TCP connections) and the crash kills the
 * doomed worker's TCP connections instead of its REST server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, createRedis, Queue, Worker } from "../../core/index.ts";
import { type Fault, type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { startFaultProxy } from "../support/fault-proxy.ts";
import { keysUnder, overRest, type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { misplacedJobs } from "../support/state-walk.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack?.stop());

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type DeclaredKeysStats = { keyViolations?: number; keyLockingCalls?: number };

/** Undeclared keys touched by flagged scripts so far (0 while the REST server has no such mode). */
function keyViolations(rest: RestServer): number {
  return (rest.stats() as DeclaredKeysStats).keyViolations ?? 0;
}

/**
 * No flagged script touched an undeclared key since `before` (plus `elsewhere`, counted on another
 * server), and where the server counts them, flagged scripts did run, so the check was not empty.
 */
function expectDeclaredKeys(before: number, elsewhere = 0): void {
  if (!overRest()) return;
  expect(keyViolations(stack.rest) - before + elsewhere, "undeclared keys touched by flagged scripts").toBe(
    0,
  );
  const flagged = (stack.rest.stats() as DeclaredKeysStats).keyLockingCalls;
  if (flagged !== undefined) expect(flagged, "runs of scripts flagged allow-key-locking").toBeGreaterThan(0);
}

interface Run {
  by: string;
  /** The worker stopped this attempt (its signal fired before the processor was done). */
  stopped: boolean;
}

/** Every processor start per job id, and whether the worker stopped it. */
class Ledger {
  readonly runs = new Map<string, Run[]>();

  /** A processor that records each run, works `durationOf(n)` ms and honours `job.signal`. */
  processor(by: string, durationOf: (n: number) => number, failFirst = (_n: number) => false) {
    return async (job: ActiveJob): Promise<unknown> => {
      const run: Run = { by, stopped: false };
      this.runs.set(job.id, [...(this.runs.get(job.id) ?? []), run]);
      const n = (job.data as { n: number }).n;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, durationOf(n));
        function done() {
          clearTimeout(timer);
          job.signal.removeEventListener("abort", done);
          resolve();
        }
        job.signal.addEventListener("abort", done, { once: true });
      });
      if (job.signal.aborted) {
        run.stopped = true;
        throw job.signal.reason ?? new Error("stopped");
      }
      if (failFirst(n) && job.attemptsMade === 0) throw new Error("the first attempt fails");
      return { by };
    };
  }

  total(): number {
    let count = 0;
    for (const runs of this.runs.values()) count += runs.length;
    return count;
  }

  /**
   * Runs that were followed by another run of the same job although they were neither stopped by
   * their worker nor made by a worker that died (nor a first attempt that failed on purpose).
   */
  unexplainedRepeats(dead: ReadonlySet<string>, retried: (id: string) => boolean): string[] {
    const wrong: string[] = [];
    for (const [id, runs] of this.runs) {
      const allowedExtra = retried(id) ? 1 : 0;
      const earlier = runs.slice(0, -1).filter((run) => !run.stopped && !dead.has(run.by));
      if (earlier.length > allowedExtra) {
        wrong.push(`${id}: ${runs.map((r) => `${r.by}${r.stopped ? "(stopped)" : ""}`).join(",")}`);
      }
    }
    return wrong;
  }
}

/**
 * What must hold whenever no worker is mid-call: one state per job, and nothing active or locked but
 * the jobs a dead worker may still hold (`mayHold`).
 */
async function walk(
  queuePrefix: string,
  ids: string[],
  step: string,
  mayHold: readonly string[] = [],
): Promise<void> {
  const misplaced = await misplacedJobs(stack.direct, queuePrefix, ids);
  expect(misplaced, `after ${step}: jobs not in exactly one state`).toEqual([]);
  const active = await stack.direct.lrange(`${queuePrefix}:active`, 0, -1);
  expect(
    active.filter((id) => !mayHold.includes(id)),
    `after ${step}: active`,
  ).toEqual([]);
  const locks = (await keysUnder(stack.direct, queuePrefix)).filter((key) => key.endsWith(":lock"));
  expect(
    locks.filter((key) => !mayHold.some((id) => key === `${queuePrefix}:${id}:lock`)),
    `after ${step}: locks`,
  ).toEqual([]);
}

async function addJobs(prefix: string, total: number, retried = (_n: number) => false): Promise<string[]> {
  const queue = new Queue("q", { redis: stack.redis, prefix });
  const added = await queue.addBulk(
    Array.from({ length: total }, (_, n) => ({
      name: "chaos",
      data: { n },
      // A third of them grouped (docs/groups.md): the same faults meet both kinds.
      opts: {
        ...(retried(n) ? { attempts: 2 } : {}),
        ...(n % 3 === 1 ? { group: { id: `g${n % 2}` } } : {}),
      },
    })),
  );
  return added.map((job) => job.id);
}

async function streamEvents(queuePrefix: string): Promise<string[][]> {
  return (await stack.direct.xrange(`${queuePrefix}:events`, "-", "+")).map(([, fields]) => fields);
}

/** Each job's `field` in its hash, for the ids where it differs from `want(id)`. */
async function fieldsOff(
  queuePrefix: string,
  ids: string[],
  field: string,
  want: (id: string) => string,
): Promise<string[]> {
  const pipeline = stack.direct.pipeline();
  for (const id of ids) pipeline.hget(`${queuePrefix}:${id}`, field);
  const values = ((await pipeline.exec()) ?? []).map(([, value]) => value as string | null);
  return ids.flatMap((id, i) => (values[i] === want(id) ? [] : [`${id}: ${field}=${values[i]}`]));
}

const cuts: { name: string; fault: Fault | null }[] = [
  { name: "no fault", fault: null },
  {
    name: "every 3rd script call's answer dropped",
    fault: { kind: "drop-after", command: "evalsha", every: 3 } as Fault,
  },
];

describe("invocations cut short mid-pipeline", () => {
  it.each(cuts)(
    "drains ended by a deadline or a stop signal while jobs run ($name): one state each after every step, none lost",
    async ({ fault }) => {
      const prefix = uniquePrefix("chaos");
      const qp = `${prefix}:q`;
      const total = 150;
      const ids = await addJobs(prefix, total);
      const violationsBefore = keyViolations(stack.rest);
      const ledger = new Ledger();
      const durationOf = (n: number) => 20 + ((n * 37) % 180);
      const worker = new Worker("q", ledger.processor("w", durationOf), {
        redis: stack.redis,
        prefix,
        batchSize: 10,
        concurrency: 4,
        leaseMs: 1000,
      });
      const errors: string[] = [];
      worker.on("error", (error) => errors.push(`${error.name}: ${error.message}`));
      const stops: Record<string, number> = {};
      let completed = 0;
      stack.setFault(fault);
      try {
        for (let step = 0; step < 80 && completed < total; step++) {
          const kind = step % 5 === 4 ? "plain" : step % 2 === 0 ? "deadline" : "signal";
          let summary: { stoppedBecause: string };
          if (kind === "deadline") {
            summary = await worker.drain({ deadline: Date.now() + 300 });
          } else if (kind === "signal") {
            const controller = new AbortController();
            const timer = setTimeout(() => controller.abort(), 150);
            summary = await worker.drain({ signal: controller.signal });
            clearTimeout(timer);
          } else {
            summary = await worker.drain({ deadline: Date.now() + 2000 });
          }
          stops[`${kind}:${summary.stoppedBecause}`] = (stops[`${kind}:${summary.stoppedBecause}`] ?? 0) + 1;
          await walk(qp, ids, `step ${step} (${kind} drain, stopped because ${summary.stoppedBecause})`);
          completed = await stack.direct.zcard(`${qp}:completed`);
        }
      } finally {
        stack.setFault(null);
      }
      expect({ completed, failed: await stack.direct.zcard(`${qp}:failed`) }).toEqual({
        completed: total,
        failed: 0,
      });
      // The cuts did happen: some drains ended on their deadline, some on their signal, some attempts were stopped.
      expect(stops["deadline:deadline"] ?? 0, JSON.stringify(stops)).toBeGreaterThan(0);
      expect(stops["signal:aborted"] ?? 0, JSON.stringify(stops)).toBeGreaterThan(0);
      const stopped = [...ledger.runs.values()].flat().filter((run) => run.stopped).length;
      expect(stopped, "attempts stopped by a deadline").toBeGreaterThan(0);
      expect(ledger.unexplainedRepeats(new Set(), () => false).slice(0, 10)).toEqual([]);
      expect(ledger.runs.size).toBe(total);
      expect((await fieldsOff(qp, ids, "atm", () => "1")).slice(0, 10)).toEqual([]);
      const completedEvents = (await streamEvents(qp)).filter((f) => f[1] === "completed").map((f) => f[3]);
      expect(completedEvents.sort()).toEqual([...ids].sort());
      expect(errors.filter((e) => !/deadline|stopp|abort/i.test(e)).slice(0, 10)).toEqual([]);
      expectDeclaredKeys(violationsBefore);
    },
    55_000,
  );
});

const faults: { name: string; fault: Fault }[] = [
  {
    name: "every 2nd script call runs, then its answer is dropped",
    fault: { kind: "drop-after", command: "evalsha", every: 2 },
  },
  {
    name: "every 3rd request of any kind runs, then its answer is dropped",
    fault: { kind: "drop-after", every: 3 },
  },
  {
    name: "every 3rd script call never arrives",
    fault: { kind: "fail-before", command: "evalsha", every: 3 },
  },
];

describe("replayed requests and lost answers", () => {
  it.each(faults)(
    "$name: one state each after every drain, attempts and events counted once",
    async ({ fault }) => {
      const prefix = uniquePrefix("replay");
      const qp = `${prefix}:q`;
      const total = 120;
      const retried = (n: number) => n % 5 === 0;
      const ids = await addJobs(prefix, total, retried);
      const violationsBefore = keyViolations(stack.rest);
      const ledger = new Ledger();
      const worker = new Worker(
        "q",
        ledger.processor("w", (n) => 1 + (n % 9), retried),
        {
          redis: stack.redis,
          prefix,
          batchSize: 8,
          concurrency: 5,
          leaseMs: 5000, // long enough that a starved CI machine never lets a lease lapse: lapses are the crash test's subject, not this one's
        },
      );
      const errors: string[] = [];
      worker.on("error", (error) => errors.push(`${error.name}: ${error.message}`));
      const rejected: string[] = [];
      stack.setFault(fault);
      try {
        for (let step = 0; step < 30; step++) {
          try {
            await worker.drain();
          } catch (error) {
            rejected.push(`step ${step}: ${(error as Error).message.slice(0, 200)}`);
          }
          stack.setFault(null);
          await walk(qp, ids, `drain ${step} under the fault`);
          if (
            (await stack.direct.zcard(`${qp}:completed`)) + (await stack.direct.zcard(`${qp}:failed`)) >=
            total
          )
            break;
          // Retries sit in delayed for their backoff (none here) or in wait; keep the fault on for the next drain.
          stack.setFault(fault);
        }
      } finally {
        stack.setFault(null);
      }
      expect(rejected).toEqual([]);
      const fired = stack.faultsFired();
      if (fired !== undefined) expect(fired, "faults the TCP proxy injected").toBeGreaterThan(0);
      expect(errors.slice(0, 10)).toEqual([]);
      expect({
        completed: await stack.direct.zcard(`${qp}:completed`),
        failed: await stack.direct.zcard(`${qp}:failed`),
      }).toEqual({ completed: total, failed: 0 });
      // Nothing ran twice but the first attempts that fail on purpose.
      expect(ledger.unexplainedRepeats(new Set(), (id) => retried(Number(id) - 1)).slice(0, 10)).toEqual([]);
      const expectedRuns = ids.map((id) => (retried(Number(id) - 1) ? 2 : 1));
      expect(ledger.total()).toBe(expectedRuns.reduce((a, b) => a + b, 0));
      const wantAttempts = (id: string) => (retried(Number(id) - 1) ? "2" : "1");
      expect((await fieldsOff(qp, ids, "atm", wantAttempts)).slice(0, 10)).toEqual([]);
      expect((await fieldsOff(qp, ids, "ats", wantAttempts)).slice(0, 10)).toEqual([]);
      const events = await streamEvents(qp);
      const completedEvents = events.filter((f) => f[1] === "completed").map((f) => f[3]);
      expect(completedEvents.sort()).toEqual([...ids].sort());
      expect(events.filter((f) => f[1] === "active").length, "active events, one per run").toBe(
        ledger.total(),
      );
      expectDeclaredKeys(violationsBefore);
    },
    40_000,
  );
});

/**
 * How the doomed worker talks to Redis, and its death: over REST its own REST server, which then goes
 * away mid-pipeline; over TCP a proxy to the server holding the queue (on the cluster its slot's
 * master: all of a tagged queue's keys are there) whose connections are then destroyed. Either way
 * whatever it sent may or may not have run, and nothing it sends afterwards arrives.
 */
async function doomedConnection(queuePrefix: string): Promise<{
  redis: PrivateStack["redis"];
  rest?: RestServer;
  cut(): Promise<void>;
  /** Lets go of the dead client (a TCP client would otherwise keep redialling the cut proxy). */
  close(): Promise<void>;
}> {
  const server = stack.serverOf(queuePrefix);
  if (!overRest()) {
    const proxy = await startFaultProxy(server);
    const tcp = createRedis({ url: proxy.url, connectTimeoutMs: 2000, commandTimeoutMs: 2000 });
    // Typed as the REST client, as stack.ts's clients are: core takes either.
    return {
      redis: tcp as unknown as PrivateStack["redis"],
      cut: () => proxy.cut(),
      close: () => tcp.close(),
    };
  }
  const rest = await startRestServer({ redis: server, token: "doomed" });
  const redis = createRedis({ url: rest.url, token: rest.token, timeoutMs: 2000 });
  return { redis, rest, cut: () => rest.close(), close: async () => {} };
}

describe("a worker that dies holding jobs", () => {
  it("its jobs stay in one state, are recovered once its leases lapse, and only they run twice", async () => {
    const prefix = uniquePrefix("crash");
    const qp = `${prefix}:q`;
    const total = 100;
    const ids = await addJobs(prefix, total);
    const leaseMs = 1000;
    const violationsBefore = keyViolations(stack.rest);
    const ledger = new Ledger();
    const durationOf = (n: number) => 30 + ((n * 13) % 50);
    const doomedLink = await doomedConnection(qp);
    const doomed = new Worker("q", ledger.processor("doomed", durationOf), {
      redis: doomedLink.redis,
      prefix,
      batchSize: 10,
      concurrency: 5,
      leaseMs,
    });
    doomed.on("error", () => {});
    const abandon = new AbortController();
    const doomedDrain = doomed.drain({ signal: abandon.signal }).then(
      () => "resolved",
      () => "rejected",
    );
    for (let wait = 0; wait < 200 && ledger.total() < 12; wait++) await sleep(10);
    expect(ledger.total(), "the doomed worker started jobs").toBeGreaterThanOrEqual(12);
    const doomedViolations = doomedLink.rest ? keyViolations(doomedLink.rest) : 0;
    await doomedLink.cut();
    // A process that died never settles; this one may, once its calls have failed. Either way it is gone.
    await Promise.race([doomedDrain, sleep(8000)]);
    const held = await stack.direct.lrange(`${qp}:active`, 0, -1);
    expect(held.length, "jobs the dead worker still holds").toBeGreaterThan(0);
    await walk(qp, ids, "the crash", held);

    const survivor = new Worker("q", ledger.processor("survivor", durationOf), {
      redis: stack.redis,
      prefix,
      batchSize: 10,
      concurrency: 5,
      leaseMs,
      stalledInterval: 300,
      maxStalledCount: 1,
    });
    const recovered: string[] = [];
    survivor.on("stalled", (id) => recovered.push(id));
    const errors: string[] = [];
    survivor.on("error", (error) => errors.push(`${error.name}: ${error.message}`));
    let finished = 0;
    for (let step = 0; step < 60 && finished < total; step++) {
      await survivor.recoverStalled();
      await survivor.drain();
      await walk(qp, ids, `recovery step ${step}`, held);
      finished = (await stack.direct.zcard(`${qp}:completed`)) + (await stack.direct.zcard(`${qp}:failed`));
      if (finished < total) await sleep(150);
    }
    abandon.abort();
    await doomedLink.close();
    await walk(qp, ids, "the recovery");
    expect({
      completed: await stack.direct.zcard(`${qp}:completed`),
      failed: await stack.direct.zcard(`${qp}:failed`),
    }).toEqual({ completed: total, failed: 0 });
    // Only what the dead worker held was recovered, and what it held was all recovered and completed.
    expect([...recovered].sort()).toEqual([...held].sort());
    expect(ledger.unexplainedRepeats(new Set(["doomed"]), () => false).slice(0, 10)).toEqual([]);
    const survivorTwice = [...ledger.runs].filter(
      ([, runs]) => runs.filter((r) => r.by === "survivor").length > 1,
    );
    expect(survivorTwice.map(([id]) => id)).toEqual([]);
    expect(ledger.runs.size).toBe(total);
    expect(errors.slice(0, 10)).toEqual([]);
    const completedEvents = (await streamEvents(qp)).filter((f) => f[1] === "completed").map((f) => f[3]);
    expect(completedEvents.sort()).toEqual([...ids].sort());
    expectDeclaredKeys(violationsBefore, doomedViolations);
  }, 40_000);
});
