/**
 * Section 3: throughput, end to end — addBulk of every job, then processing until the last one is
 * done. nimbusq runs `Worker.drain` over the local REST server (several drains at once play several
 * Lambda invocations); BullMQ runs one Worker over TCP, started and idle before the clock starts, so
 * it begins processing while the bulk add is still going (nimbusq drains only after its add returns).
 *
 * No-op processor: a few nimbusq settings are tried once, the best is then run against BullMQ at
 * concurrency 50 in alternating rounds. 10 ms processor: pairs with the same number of jobs in flight.
 */
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { Queue, Worker } from "../../core/index.ts";
import { type BenchEnv, flush, median, round, sleep, unique, waitUntil } from "./common.ts";

export interface NimbusqSetting {
  /** Drains running at once (Lambda invocations). */
  workers: number;
  batchSize: number;
  concurrency: number;
}

export interface ThroughputRun {
  system: "nimbusq" | "bullmq";
  setting: string;
  jobs: number;
  addMs: number;
  totalMs: number;
  jobsPerSecond: number;
  /** Jobs finished after the add returned, per second of the time after it (processing alone). */
  afterAddJobsPerSecond: number;
  /** False when the time limit stopped the run before every job was done. */
  complete: boolean;
}

export interface ThroughputCase {
  processor: "no-op" | "10 ms I/O";
  jobs: number;
  /** Jobs in flight at once (I/O case: the same on both sides). */
  inFlight?: number;
  nimbusqSetting: string;
  bullmqSetting: string;
  /** Every nimbusq setting tried once (no-op case), fastest first. */
  explored: ThroughputRun[];
  rounds: { nimbusq: ThroughputRun; bullmq: ThroughputRun }[];
  nimbusqMedian: number;
  bullmqMedian: number;
  /** nimbusq / BullMQ jobs per second. */
  ratio: number;
  /** Medians of afterAddJobsPerSecond. */
  nimbusqAfterAddMedian: number;
  bullmqAfterAddMedian: number;
}

export interface ThroughputResult {
  cases: ThroughputCase[];
}

type Processor = () => Promise<unknown>;
const noop: Processor = async () => undefined;
const io10ms: Processor = () => sleep(10);

export const settingLabel = (s: NimbusqSetting) =>
  `${s.workers} × drain(batchSize ${s.batchSize}, concurrency ${s.concurrency})`;

function bulk(count: number) {
  return Array.from({ length: count }, (_, n) => ({ name: "t", data: { n } }));
}

async function nimbusqRun(
  env: BenchEnv,
  setting: NimbusqSetting,
  jobs: number,
  processor: Processor,
  limitMs: number,
): Promise<ThroughputRun> {
  const name = unique("tp-nq");
  const redis = env.fastRedis;
  const queue = new Queue(name, { redis });
  const workers = Array.from(
    { length: setting.workers },
    () =>
      new Worker(name, processor, { redis, batchSize: setting.batchSize, concurrency: setting.concurrency }),
  );
  const started = performance.now();
  await queue.addBulk(bulk(jobs));
  const addMs = performance.now() - started;
  const deadline = Date.now() + limitMs;
  const summaries = await Promise.all(workers.map((worker) => worker.drain({ deadline })));
  const totalMs = performance.now() - started;
  const done = summaries.reduce((sum, s) => sum + s.completed, 0);
  await flush(env);
  return {
    system: "nimbusq",
    setting: settingLabel(setting),
    jobs,
    addMs: round(addMs, 1),
    totalMs: round(totalMs, 1),
    jobsPerSecond: round((done / totalMs) * 1000, 0),
    afterAddJobsPerSecond: round((done / (totalMs - addMs)) * 1000, 0),
    complete: done === jobs,
  };
}

async function bullmqRun(
  env: BenchEnv,
  concurrency: number,
  jobs: number,
  processor: Processor,
  limitMs: number,
): Promise<ThroughputRun> {
  const name = unique("tp-bq");
  const queue = new BullQueue(name, { connection: env.connection });
  const worker = new BullWorker(name, processor, { connection: env.connection, concurrency });
  let done = 0;
  worker.on("completed", () => {
    done += 1;
  });
  try {
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    await sleep(200);
    const started = performance.now();
    await queue.addBulk(bulk(jobs));
    const addMs = performance.now() - started;
    const doneDuringAdd = done;
    await waitUntil(() => done >= jobs, limitMs, 1);
    const totalMs = performance.now() - started;
    return {
      system: "bullmq",
      setting: `1 Worker, concurrency ${concurrency}`,
      jobs,
      addMs: round(addMs, 1),
      totalMs: round(totalMs, 1),
      jobsPerSecond: round((Math.min(done, jobs) / totalMs) * 1000, 0),
      afterAddJobsPerSecond: round(((Math.min(done, jobs) - doneDuringAdd) / (totalMs - addMs)) * 1000, 0),
      complete: done >= jobs,
    };
  } finally {
    await worker.close(true);
    await queue.close();
    await flush(env);
  }
}

async function alternate(
  env: BenchEnv,
  rounds: number,
  nimbusq: () => Promise<ThroughputRun>,
  bullmq: () => Promise<ThroughputRun>,
): Promise<{ nimbusq: ThroughputRun; bullmq: ThroughputRun }[]> {
  const out: { nimbusq: ThroughputRun; bullmq: ThroughputRun }[] = [];
  for (let i = 0; i < rounds; i++) {
    const ours = await nimbusq();
    const theirs = await bullmq();
    env.log(
      `throughput: round ${i + 1}: nimbusq ${ours.jobsPerSecond} jobs/s (${ours.setting}), BullMQ ${theirs.jobsPerSecond} jobs/s`,
    );
    out.push({ nimbusq: ours, bullmq: theirs });
  }
  return out;
}

function summarise(
  base: Omit<
    ThroughputCase,
    "rounds" | "nimbusqMedian" | "bullmqMedian" | "ratio" | "nimbusqAfterAddMedian" | "bullmqAfterAddMedian"
  >,
  rounds: ThroughputCase["rounds"],
): ThroughputCase {
  const ours = median(rounds.map((r) => r.nimbusq.jobsPerSecond));
  const theirs = median(rounds.map((r) => r.bullmq.jobsPerSecond));
  return {
    ...base,
    rounds,
    nimbusqMedian: ours,
    bullmqMedian: theirs,
    ratio: round(ours / theirs, 2),
    nimbusqAfterAddMedian: median(rounds.map((r) => r.nimbusq.afterAddJobsPerSecond)),
    bullmqAfterAddMedian: median(rounds.map((r) => r.bullmq.afterAddJobsPerSecond)),
  };
}

export async function runThroughput(env: BenchEnv): Promise<ThroughputResult> {
  const quick = env.quick;
  const limitMs = quick ? 20_000 : 60_000;
  // Scripts loaded before anything is timed.
  await nimbusqRun(env, { workers: 1, batchSize: 10, concurrency: 10 }, 20, noop, limitMs);
  await bullmqRun(env, 10, 20, noop, limitMs);
  const cases: ThroughputCase[] = [];

  const noopJobs = quick ? 500 : 20_000;
  const candidates: NimbusqSetting[] = [
    { workers: 1, batchSize: 100, concurrency: 100 },
    { workers: 1, batchSize: 500, concurrency: 500 },
    { workers: 4, batchSize: 100, concurrency: 100 },
    { workers: 4, batchSize: 250, concurrency: 250 },
  ];
  const explored: ThroughputRun[] = [];
  for (const setting of quick ? candidates.slice(0, 2) : candidates) {
    const run = await nimbusqRun(env, setting, noopJobs, noop, limitMs);
    env.log(`throughput: explore ${run.setting}: ${run.jobsPerSecond} jobs/s`);
    explored.push(run);
  }
  explored.sort((a, b) => b.jobsPerSecond - a.jobsPerSecond);
  const bestIndex = candidates.findIndex((s) => settingLabel(s) === explored[0]?.setting);
  const best = candidates[Math.max(0, bestIndex)] as NimbusqSetting;
  const noopRounds = await alternate(
    env,
    quick ? 1 : 3,
    () => nimbusqRun(env, best, noopJobs, noop, limitMs),
    () => bullmqRun(env, 50, noopJobs, noop, limitMs),
  );
  cases.push(
    summarise(
      {
        processor: "no-op",
        jobs: noopJobs,
        nimbusqSetting: settingLabel(best),
        bullmqSetting: "1 Worker, concurrency 50",
        explored,
      },
      noopRounds,
    ),
  );

  const ioJobs = quick ? 200 : 5_000;
  const pairs: { inFlight: number; nimbusq: NimbusqSetting }[] = [
    { inFlight: 50, nimbusq: { workers: 1, batchSize: 50, concurrency: 50 } },
    { inFlight: 200, nimbusq: { workers: 4, batchSize: 50, concurrency: 50 } },
  ];
  for (const pair of quick ? pairs.slice(0, 1) : pairs) {
    const rounds = await alternate(
      env,
      quick ? 1 : 2,
      () => nimbusqRun(env, pair.nimbusq, ioJobs, io10ms, limitMs),
      () => bullmqRun(env, pair.inFlight, ioJobs, io10ms, limitMs),
    );
    cases.push(
      summarise(
        {
          processor: "10 ms I/O",
          jobs: ioJobs,
          inFlight: pair.inFlight,
          nimbusqSetting: settingLabel(pair.nimbusq),
          bullmqSetting: `1 Worker, concurrency ${pair.inFlight}`,
          explored: [],
        },
        rounds,
      ),
    );
  }
  return { cases };
}
