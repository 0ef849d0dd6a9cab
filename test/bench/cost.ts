/**
 * Sections 1 and 2: billed Redis commands and HTTP requests per job.
 *
 * Billed commands are what Upstash bills: every command plus every `redis.call` a script runs.
 * nimbusq is counted by the metering REST server (INFO commandstats diffs around each script request)
 * and cross-checked with the redis-server's own `INFO commandstats`; BullMQ 6.7.0 by
 * `INFO commandstats` alone, with its worker started and idle before the window opens.
 *
 * Two traffic patterns, at batch size B (nimbusq: lease and ack B at a time; BullMQ: concurrency B):
 * - backlog: every job is added at once (`addBulk`), then processed — the steady state;
 * - arrivals: jobs arrive B at a time (`add` for one, `addBulk` for more) and the next B come once
 *   those are done, so every batch pays the way from idle to busy and back.
 * The window runs from the first add to the last completion (plus 50 ms, so BullMQ's way back to
 * waiting is counted too).
 *
 * Then the cases the worker-engine issue names, each with the worker's default batchSize where it
 * says so: a backlog at concurrency 1; one job arriving at a time into an idle queue ("trickle": add
 * one job, one drain — as a kicked serverless invocation runs — until it is done, the next job only
 * then); a backlog at concurrency 50 (batchSize 50) with all events and with `events: "final"`. Each
 * next to BullMQ 6.7.0 on the same work (BullMQ has no events level: its all-events figure stands for
 * both). From the concurrency-50 rows: the jobs/s one Upstash database's 10,000 commands/s allow.
 */
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { Queue, toRedisPort, Worker } from "../../core/index.ts";
import { trackWorkerInvocation } from "../../core/worker/worker-registry.ts";
import { type BenchEnv, billedTotal, chunks, flush, round, sleep, unique, waitUntil } from "./common.ts";
import type { EventsLevel } from "./throughput-shared.ts";

export type Pattern = "backlog" | "arrivals";

export interface NimbusqCounts {
  billedPerJob: number;
  /** The add calls' share of billedPerJob. */
  addPerJob: number;
  requestsPerJob: number;
  /** The same window counted by redis-server's INFO commandstats (INFO itself left out). */
  crossCheckPerJob: number;
  /**
   * Script calls Upstash runs under its global lock (no allow-key-locking: the ones that may read keys
   * not in KEYS), per job. Absent in results from before it was counted.
   */
  globalLockPerJob?: number;
}

export interface CostRow {
  pattern: Pattern;
  batch: number;
  jobs: number;
  nimbusq: NimbusqCounts;
  bullmq: { billedPerJob: number };
}

export type IssueCase = "backlog-c1" | "trickle" | "backlog-c50" | "backlog-c50-final";

/** One of the worker-engine issue's cases, next to BullMQ on the same work. */
export interface IssueCostRow {
  case: IssueCase;
  jobs: number;
  /** What the nimbusq Worker ran with, defaults spelled out. */
  nimbusqSetting: string;
  bullmqSetting: string;
  nimbusq: NimbusqCounts;
  bullmq: { billedPerJob: number };
  /** True when BullMQ's figure is the all-events run's (BullMQ has no events level). */
  bullmqShared?: boolean;
}

/** Jobs/s one Upstash database allows: its commands/s limit ÷ billed commands per job at concurrency 50. */
export interface UpstashCeiling {
  commandsPerSecond: number;
  nimbusq: number;
  nimbusqFinalEvents: number;
  bullmq: number;
}

export interface AddCostRow {
  case: string;
  nimbusq: number;
  nimbusqCrossCheck: number;
  bullmq: number;
}

export interface CostResult {
  /** The worker-engine issue's cases (absent in results written before them). */
  issueCases?: IssueCostRow[];
  ceiling?: UpstashCeiling;
  lifecycle: CostRow[];
  failing: CostRow[];
  adds: AddCostRow[];
  /** Billed commands a worker Lambda invocation adds on its own: registering and unregistering itself. */
  invocationOverhead: number;
  failingOptions: { attempts: number; backoff: { type: string; delay: number } };
}

const failingOptions = { attempts: 3, backoff: { type: "fixed", delay: 50 } };
const noop = async () => undefined;
const alwaysFails = async () => {
  throw new Error("always fails");
};

interface Window {
  billed: number;
  requests: number;
  crossCheck: number;
  /** Script runs without allow-key-locking (RestStats.globalLockCalls). */
  globalLock: number;
}

/** Opens a window on both counters; `close` reads what happened since. */
async function openWindow(env: BenchEnv): Promise<{ close(): Promise<Window> }> {
  env.metered.resetStats();
  const before = await billedTotal(env.direct);
  return {
    close: async () => {
      const stats = env.metered.stats();
      const crossCheck = (await billedTotal(env.direct)) - before;
      return {
        billed: stats.billed,
        requests: stats.requests,
        crossCheck,
        globalLock: stats.globalLockCalls,
      };
    },
  };
}

function jobsOf(start: number, length: number, opts?: object) {
  return Array.from({ length }, (_, i) => ({ name: "n", data: { n: start + i }, ...(opts ? { opts } : {}) }));
}

/**
 * How the jobs are added: all at once (backlog; or `perCall` jobs an addBulk, each processed before
 * the next) or B at a time (arrivals).
 */
function addChunks(pattern: Pattern, jobs: number, batch: number, perCall = jobs): [number, number][] {
  return pattern === "backlog" ? chunks(jobs, perCall) : chunks(jobs, batch);
}

interface NimbusqSpec {
  pattern: Pattern;
  /** Jobs per arrival (arrivals pattern). */
  arrive: number;
  /** Backlog: jobs per addBulk (default all at once). */
  perCall?: number;
  /** Absent: the Worker's default. */
  batchSize?: number;
  concurrency?: number;
  events?: EventsLevel;
  jobs: number;
  failing: boolean;
}

async function nimbusqRun(env: BenchEnv, spec: NimbusqSpec): Promise<NimbusqCounts & { setting: string }> {
  const { pattern, jobs, failing } = spec;
  const name = unique(`nq-${failing ? "fail" : "ok"}-${spec.batchSize ?? "d"}`);
  const redis = env.meteredRedis;
  // `events` is the engine's new option; cast so this compiles before and after it exists.
  const level = spec.events ? { events: spec.events } : {};
  const queue = new Queue(name, { redis, ...level } as ConstructorParameters<typeof Queue>[1]);
  const worker = new Worker(name, failing ? alwaysFails : noop, {
    redis,
    ...(spec.batchSize !== undefined ? { batchSize: spec.batchSize } : {}),
    ...(spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {}),
    ...level,
  } as ConstructorParameters<typeof Worker>[2]);
  const setting = `batchSize ${worker.batchSize}${spec.batchSize === undefined ? " (default)" : ""}, concurrency ${worker.concurrency}${spec.concurrency === undefined ? " (default)" : ""}${spec.events ? `, events "${spec.events}"` : ""}${spec.perCall !== undefined && spec.perCall < jobs ? `, added ${spec.perCall} per addBulk` : ""}`;
  // Loads every script (EVALSHA → NOSCRIPT → EVAL) outside the window.
  await queue.add("warm", {}, failing ? failingOptions : undefined);
  for (let i = 0; i < 4; i++) {
    const summary = await worker.drain();
    if (summary.nextDueAt === undefined) break;
    await sleep(Math.max(0, summary.nextDueAt - Date.now()) + 5);
  }
  const window = await openWindow(env);
  let addBilled = 0;
  let finished = 0;
  for (const [start, length] of addChunks(pattern, jobs, spec.arrive, spec.perCall)) {
    const before = env.metered.stats().billed;
    const opts = failing ? failingOptions : undefined;
    if (length === 1) await queue.add("n", { n: start }, opts);
    else await queue.addBulk(jobsOf(start, length, opts));
    addBilled += env.metered.stats().billed - before;
    // A failing job needs one drain per attempt, each once its backoff is due.
    for (let pass = 0; pass < failingOptions.attempts * 3; pass++) {
      const summary = await worker.drain({ deadline: Date.now() + 30_000 });
      finished += failing ? summary.failed : summary.completed;
      if (summary.nextDueAt === undefined) break;
      await sleep(Math.max(0, summary.nextDueAt - Date.now()) + 5);
    }
  }
  const counted = await window.close();
  if (finished !== jobs) throw new Error(`nimbusq ${setting}: ${finished} of ${jobs} jobs finished`);
  return {
    setting,
    billedPerJob: round(counted.billed / jobs, 3),
    addPerJob: round(addBilled / jobs, 3),
    requestsPerJob: round(counted.requests / jobs, 3),
    crossCheckPerJob: round(counted.crossCheck / jobs, 3),
    globalLockPerJob: round(counted.globalLock / jobs, 4),
  };
}

/** BullMQ's Worker at `concurrency`, jobs added all at once or `arrive` at a time. */
async function bullmqRun(
  env: BenchEnv,
  pattern: Pattern,
  arrive: number,
  concurrency: number,
  jobs: number,
  failing: boolean,
  perCall?: number,
) {
  const name = unique(`bq-${failing ? "fail" : "ok"}-${concurrency}`);
  const queue = new BullQueue(name, { connection: env.connection });
  const worker = new BullWorker(name, failing ? alwaysFails : noop, {
    connection: env.connection,
    concurrency,
  });
  let finished = 0;
  worker.on("completed", () => {
    finished += 1;
  });
  worker.on("failed", (job) => {
    if (job && job.attemptsMade >= failingOptions.attempts) finished += 1;
  });
  try {
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    // One job through first, so scripts are loaded; start-up commands (connection setup, the first
    // stalled check) happen before the window too.
    await queue.add("warm", {}, failing ? failingOptions : undefined);
    if (!(await waitUntil(() => finished >= 1, 10_000))) throw new Error("BullMQ warm-up job did not finish");
    await sleep(500);
    const before = await billedTotal(env.direct);
    for (const [start, length] of addChunks(pattern, jobs, arrive, perCall)) {
      const opts = failing ? failingOptions : undefined;
      if (length === 1) await queue.add("n", { n: start }, opts);
      else await queue.addBulk(jobsOf(start, length, opts));
      const done = await waitUntil(() => finished >= 1 + start + length, 30_000);
      if (!done)
        throw new Error(
          `BullMQ concurrency ${concurrency}: ${finished - 1} of ${start + length} jobs finished`,
        );
    }
    await sleep(50);
    const billed = (await billedTotal(env.direct)) - before;
    return { billedPerJob: round(billed / jobs, 3) };
  } finally {
    await worker.close();
    await queue.close();
  }
}

/** Adds alone (the README's cost table): one job, a bulk of 100, a delayed job. */
async function addCosts(env: BenchEnv): Promise<AddCostRow[]> {
  const ours = new Queue(unique("nq-add"), { redis: env.meteredRedis });
  const theirs = new BullQueue(unique("bq-add"), { connection: env.connection });
  try {
    await ours.add("warm", {});
    await theirs.add("warm", {});
    const singles = env.quick ? 5 : 20;
    const measure = async (action: () => Promise<unknown>) => {
      const window = await openWindow(env);
      await action();
      return await window.close();
    };
    const rows: AddCostRow[] = [];
    const row = (label: string, per: number, a: Window, b: Window) =>
      rows.push({
        case: label,
        nimbusq: round(a.billed / per, 2),
        nimbusqCrossCheck: round(a.crossCheck / per, 2),
        bullmq: round(b.crossCheck / per, 2),
      });
    const ourAdd = await measure(async () => {
      for (let i = 0; i < singles; i++) await ours.add("x", { i });
    });
    const theirAdd = await measure(async () => {
      for (let i = 0; i < singles; i++) await theirs.add("x", { i });
    });
    row("add (one job)", singles, ourAdd, theirAdd);
    const bulk = jobsOf(0, 100);
    row(
      "addBulk of 100, per job",
      100,
      await measure(() => ours.addBulk(bulk)),
      await measure(() => theirs.addBulk(bulk)),
    );
    row(
      "delayed add",
      1,
      await measure(() => ours.add("d", {}, { delay: 60_000 })),
      await measure(() => theirs.add("d", {}, { delay: 60_000 })),
    );
    return rows;
  } finally {
    await theirs.close();
  }
}

/**
 * A worker invocation registers itself, with its batch size and concurrency, on start and removes
 * itself at the end (the sweeper reads both).
 */
async function invocationOverhead(env: BenchEnv): Promise<number> {
  const port = toRedisPort(env.meteredRedis);
  const settings = { batchSize: 20, concurrency: 10 };
  await trackWorkerInvocation(port, "bull", "warm", "warm", Date.now() + 60_000, settings);
  await trackWorkerInvocation(port, "bull", "warm", "warm", 0);
  env.metered.resetStats();
  await trackWorkerInvocation(port, "bull", "overhead", "invocation-1", Date.now() + 60_000, settings);
  await trackWorkerInvocation(port, "bull", "overhead", "invocation-1", 0);
  return env.metered.stats().billed;
}

/** The worker-engine issue's cases, and the Upstash ceiling they imply. */
async function issueCases(env: BenchEnv): Promise<{ rows: IssueCostRow[]; ceiling: UpstashCeiling }> {
  const backlogJobs = env.quick ? 100 : 2000;
  const oneCall = Math.min(backlogJobs, 1000);
  const trickleJobs = env.quick ? 10 : 200;
  const specs: {
    case: IssueCase;
    nimbusq: Omit<NimbusqSpec, "failing">;
    bullmq?: { pattern: Pattern; concurrency: number };
  }[] = [
    {
      case: "backlog-c1",
      nimbusq: { pattern: "backlog", arrive: backlogJobs, concurrency: 1, jobs: backlogJobs },
      bullmq: { pattern: "backlog", concurrency: 1 },
    },
    {
      case: "trickle",
      nimbusq: { pattern: "arrivals", arrive: 1, jobs: trickleJobs },
      bullmq: { pattern: "arrivals", concurrency: 1 },
    },
    {
      case: "backlog-c50",
      // Added 1,000 at a time: one atomic addJobs call each. A single addBulk of more than 1,000 small
      // jobs is staged (all or nothing over several calls) at 2 more billed commands a job.
      nimbusq: {
        pattern: "backlog",
        arrive: backlogJobs,
        perCall: oneCall,
        batchSize: 50,
        concurrency: 50,
        jobs: backlogJobs,
      },
      bullmq: { pattern: "backlog", concurrency: 50 },
    },
    {
      case: "backlog-c50-final",
      nimbusq: {
        pattern: "backlog",
        arrive: backlogJobs,
        perCall: oneCall,
        batchSize: 50,
        concurrency: 50,
        events: "final",
        jobs: backlogJobs,
      },
    },
  ];
  const rows: IssueCostRow[] = [];
  for (const spec of specs) {
    const { setting, ...nimbusq } = await nimbusqRun(env, { ...spec.nimbusq, failing: false });
    const previous = rows.at(-1);
    const bullmq = spec.bullmq
      ? await bullmqRun(
          env,
          spec.bullmq.pattern,
          spec.nimbusq.arrive,
          spec.bullmq.concurrency,
          spec.nimbusq.jobs,
          false,
          spec.nimbusq.perCall,
        )
      : { billedPerJob: previous?.bullmq.billedPerJob ?? Number.NaN };
    const concurrency = spec.bullmq?.concurrency ?? 50;
    rows.push({
      case: spec.case,
      jobs: spec.nimbusq.jobs,
      nimbusqSetting: setting,
      bullmqSetting: `1 Worker, concurrency ${concurrency}${spec.bullmq ? "" : " (all events: BullMQ has no events level)"}`,
      nimbusq,
      bullmq,
      ...(spec.bullmq ? {} : { bullmqShared: true }),
    });
    env.log(
      `cost: ${spec.case} (${setting}): nimbusq ${nimbusq.billedPerJob}/job, ${nimbusq.requestsPerJob} req/job; BullMQ ${bullmq.billedPerJob}/job`,
    );
    await flush(env);
  }
  const perJob = (c: IssueCase, side: "nimbusq" | "bullmq") =>
    rows.find((r) => r.case === c)?.[side].billedPerJob ?? Number.NaN;
  const limit = 10_000;
  return {
    rows,
    ceiling: {
      commandsPerSecond: limit,
      nimbusq: round(limit / perJob("backlog-c50", "nimbusq"), 0),
      nimbusqFinalEvents: round(limit / perJob("backlog-c50-final", "nimbusq"), 0),
      bullmq: round(limit / perJob("backlog-c50", "bullmq"), 0),
    },
  };
}

export async function runCost(env: BenchEnv): Promise<CostResult> {
  const issue = await issueCases(env);
  const batches = env.quick ? [1, 10] : [1, 10, 50, 100];
  const lifecycle: CostRow[] = [];
  const failing: CostRow[] = [];
  const grid = async (fail: boolean, pattern: Pattern, batch: number, jobs: number) => {
    const { setting: _, ...nimbusq } = await nimbusqRun(env, {
      pattern,
      arrive: batch,
      batchSize: batch,
      concurrency: batch,
      jobs,
      failing: fail,
    });
    const bullmq = await bullmqRun(env, pattern, batch, batch, jobs, fail);
    return { pattern, batch, jobs, nimbusq, bullmq };
  };
  for (const pattern of ["backlog", "arrivals"] as const) {
    for (const batch of batches) {
      const row = await grid(false, pattern, batch, Math.max(env.quick ? 20 : 200, batch));
      lifecycle.push(row);
      env.log(
        `cost: lifecycle, ${pattern}, batch ${batch}: nimbusq ${row.nimbusq.billedPerJob}/job, ${row.nimbusq.requestsPerJob} req/job; BullMQ ${row.bullmq.billedPerJob}/job`,
      );
    }
    await flush(env);
  }
  for (const pattern of ["backlog", "arrivals"] as const) {
    for (const batch of batches) {
      const row = await grid(true, pattern, batch, Math.max(env.quick ? 4 : 20, batch));
      failing.push(row);
      env.log(
        `cost: failing ×3, ${pattern}, batch ${batch}: nimbusq ${row.nimbusq.billedPerJob}/job; BullMQ ${row.bullmq.billedPerJob}/job`,
      );
    }
    await flush(env);
  }
  const adds = await addCosts(env);
  const overhead = await invocationOverhead(env);
  await flush(env);
  return {
    issueCases: issue.rows,
    ceiling: issue.ceiling,
    lifecycle,
    failing,
    adds,
    invocationOverhead: overhead,
    failingOptions,
  };
}
