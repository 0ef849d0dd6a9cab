/**
 * Section 3: throughput, processing only, like for like.
 *
 * Every job is added (`addBulk`, not timed) before the worker starts; the clock runs in the worker's
 * own process from "go" to the last job's completion. nimbusq's Worker and BullMQ's Worker each run in
 * a child process of their own (throughput-worker.ts; one process per library for the whole section, a
 * fresh Worker per run), with the same jobs in flight: nimbusq one Worker with concurrency
 * = N draining over the local REST server, BullMQ one Worker with concurrency N over TCP, on the same
 * redis-server. Rounds alternate nimbusq, BullMQ; medians of the rounds.
 *
 * Two network profiles: loopback as it is, and every nimbusq HTTP request and every BullMQ round trip
 * delayed by the same 2 ms (a REST server of its own with an unlimited `delay` fault; a delaying TCP
 * proxy in front of redis-server for BullMQ). Three processors: no-op, 10 ms of I/O, and seeded
 * exponential durations with mean 10 ms (the same duration for the same job index on both sides).
 */
import { Queue as BullQueue } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { createRedis, Queue } from "../../core/index.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { type BenchEnv, chunks, flush, median, round, unique } from "./common.ts";
import { type DelayProxy, startDelayProxy } from "./delay-proxy.ts";
import { WorkerProcess } from "./throughput-process.ts";
import {
  meanDurationMs,
  type ParentMessage,
  type ProcessorKind,
  processorLabels,
  type RunReport,
  type System,
} from "./throughput-shared.ts";

export type NetworkProfile = "loopback" | "delayed";

export interface ThroughputRun {
  system: System;
  jobs: number;
  done: number;
  elapsedMs: number;
  jobsPerSecond: number;
  /** The processors' measured mean wall time (ms). */
  processorMeanMs: number;
  /** Jobs/s from the 10th to the 90th percentile job's completion (no ramp-up, no tail). */
  middleJobsPerSecond: number;
  /** False when the time limit stopped the run before every job was done. */
  complete: boolean;
  /** redis-server's CPU time (user + system) during the run, per job (µs). */
  redisCpuUsPerJob?: number;
}

export interface ThroughputCase {
  profile: NetworkProfile;
  /** Added to every HTTP request / TCP round trip (ms); 0 on loopback. */
  delayMs: number;
  processor: ProcessorKind;
  inFlight: number;
  jobs: number;
  nimbusqSetting: string;
  bullmqSetting: string;
  /** Mean requested job duration d over this case's jobs (ms); absent for the no-op processor. */
  meanDurationMs?: number;
  /** N / d: what no worker with N jobs in flight exceeds (jobs/s); absent for the no-op processor. */
  physicalLimit?: number;
  rounds: { nimbusq: ThroughputRun; bullmq: ThroughputRun }[];
  nimbusqMedian: number;
  bullmqMedian: number;
  /** nimbusq / BullMQ, of the medians. */
  ratio: number;
  /** Medians of middleJobsPerSecond. */
  nimbusqMiddleMedian: number;
  bullmqMiddleMedian: number;
  /** Medians as a fraction of physicalLimit. */
  nimbusqOfLimit?: number;
  bullmqOfLimit?: number;
}

export interface ThroughputResult {
  /** How nimbusq reached Redis: the REST server (the main table) or TCP like BullMQ (issue 27). */
  nimbusqOver?: "rest" | "tcp";
  delayMs: number;
  /** What the delayed profile added to one round trip, measured with PINGs (median, ms). */
  measuredDelayMs?: { rest: number; tcp: number };
  rounds: number;
  cases: ThroughputCase[];
}

const delayMs = 2;
const processors: ProcessorKind[] = ["no-op", "io-10ms", "variable"];
const inFlights = [50, 200];

interface Endpoints {
  profile: NetworkProfile;
  rest: { url: string; token: string };
  tcp: { host: string; port: number };
}

/** Adds `jobs` jobs `{ n }` with each library's own Queue, over loopback (not timed). */
async function addJobs(env: BenchEnv, system: System, queue: string, jobs: number): Promise<void> {
  const bulk = (start: number, length: number) =>
    Array.from({ length }, (_, i) => ({ name: "t", data: { n: start + i } }));
  if (system === "nimbusq") {
    const ours = new Queue(queue, { redis: env.fastRedis });
    for (const [start, length] of chunks(jobs, 2000)) await ours.addBulk(bulk(start, length));
    return;
  }
  const theirs = new BullQueue(queue, { connection: env.connection });
  try {
    for (const [start, length] of chunks(jobs, 2000)) await theirs.addBulk(bulk(start, length));
  } finally {
    await theirs.close();
  }
}

/** redis-server's CPU seconds so far (user + system, its own process and threads), from INFO. */
async function redisCpuSeconds(env: BenchEnv): Promise<number> {
  const info = String(await env.direct.info("cpu"));
  const read = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
  return read("used_cpu_user") + read("used_cpu_sys");
}

async function runOnce(
  env: BenchEnv,
  worker: WorkerProcess,
  at: Endpoints,
  processor: ProcessorKind,
  inFlight: number,
  jobs: number,
  tcp = false,
): Promise<ThroughputRun> {
  const limitMs = env.quick ? 20_000 : 60_000;
  const queue = unique(`tp-${worker.system}`);
  try {
    await addJobs(env, worker.system, queue, jobs);
    const prepare: ParentMessage = {
      type: "prepare",
      system: worker.system,
      queue,
      prefix: "bull",
      processor,
      inFlight,
      jobs,
      limitMs,
      ...(worker.system === "nimbusq" && !tcp ? { rest: at.rest } : { tcp: at.tcp }),
      ...(worker.system === "nimbusq" && tcp ? { nimbusqTcp: true } : {}),
    };
    const ready = await worker.next(prepare, 30_000);
    if (ready.type !== "ready") throw new Error(`${worker.system}: expected ready, got ${ready.type}`);
    const cpuBefore = await redisCpuSeconds(env);
    const done = await worker.next({ type: "go" }, limitMs + 30_000);
    const cpuSeconds = (await redisCpuSeconds(env)) - cpuBefore;
    if (done.type !== "done") throw new Error(`${worker.system}: expected done, got ${done.type}`);
    const report: RunReport = done;
    return {
      system: worker.system,
      jobs,
      done: report.done,
      elapsedMs: round(report.elapsedMs, 1),
      jobsPerSecond: round((Math.min(report.done, jobs) / report.elapsedMs) * 1000, 0),
      processorMeanMs: round(report.processorMeanMs, 2),
      middleJobsPerSecond: round(report.middleJobsPerSecond, 0),
      complete: report.done >= jobs,
      redisCpuUsPerJob: round((cpuSeconds * 1e6) / Math.max(1, Math.min(report.done, jobs)), 1),
    };
  } finally {
    await flush(env);
  }
}

/** Median PING round trip (ms) of `ping`, over `count` sequential calls after a few unmeasured ones. */
async function pingMs(ping: () => Promise<unknown>, count: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < count + 5; i++) {
    const started = performance.now();
    await ping();
    if (i >= 5) samples.push(performance.now() - started);
  }
  return median(samples);
}

/** The delay each profile adds to one round trip: delayed minus loopback PING, REST and TCP. */
async function measureDelay(env: BenchEnv, profiles: Endpoints[]): Promise<{ rest: number; tcp: number }> {
  const [loopback, delayed] = profiles as [Endpoints, Endpoints];
  const rest = async (at: Endpoints) => {
    const redis = createRedis({ url: at.rest.url, token: at.rest.token });
    return await pingMs(() => redis.ping(), env.quick ? 30 : 200);
  };
  const tcp = async (at: Endpoints) => {
    const redis = new IORedis({ ...at.tcp, maxRetriesPerRequest: null });
    try {
      return await pingMs(() => redis.ping(), env.quick ? 30 : 200);
    } finally {
      redis.disconnect();
    }
  };
  return {
    rest: round((await rest(delayed)) - (await rest(loopback)), 2),
    tcp: round((await tcp(delayed)) - (await tcp(loopback)), 2),
  };
}

function jobsFor(quick: boolean, processor: ProcessorKind, inFlight: number, tcp: boolean): number {
  if (processor === "no-op") return quick ? 200 : 10_000;
  if (tcp) return quick ? inFlight * 3 : Math.max(10_000, inFlight * 60);
  // Each slot runs a given number of jobs: about 0.6 s at the physical limit in a full run.
  return inFlight * (quick ? 3 : 60);
}

function summarise(
  at: Endpoints,
  processor: ProcessorKind,
  inFlight: number,
  jobs: number,
  rounds: ThroughputCase["rounds"],
): ThroughputCase {
  const ours = median(rounds.map((r) => r.nimbusq.jobsPerSecond));
  const theirs = median(rounds.map((r) => r.bullmq.jobsPerSecond));
  const d = meanDurationMs(processor, jobs);
  const limit = d > 0 ? (inFlight / d) * 1000 : undefined;
  return {
    profile: at.profile,
    delayMs: at.profile === "delayed" ? delayMs : 0,
    processor,
    inFlight,
    jobs,
    nimbusqSetting: `1 Worker, concurrency ${inFlight}, batchSize ${2 * inFlight} (drain)`,
    bullmqSetting: `1 Worker, concurrency ${inFlight}`,
    ...(limit !== undefined
      ? {
          meanDurationMs: round(d, 3),
          physicalLimit: round(limit, 0),
          nimbusqOfLimit: round(ours / limit, 3),
          bullmqOfLimit: round(theirs / limit, 3),
        }
      : {}),
    rounds,
    nimbusqMedian: ours,
    bullmqMedian: theirs,
    ratio: round(ours / theirs, 2),
    nimbusqMiddleMedian: median(rounds.map((r) => r.nimbusq.middleJobsPerSecond)),
    bullmqMiddleMedian: median(rounds.map((r) => r.bullmq.middleJobsPerSecond)),
  };
}

/**
 * The throughput table; with `nimbusqOver` "tcp" (issue 27) nimbusq reaches the same redis-server over
 * TCP as BullMQ does (createRedis with a redis:// URL; through the same delaying proxy in the delayed
 * profile), no REST server between, at least 10,000 jobs a case.
 */
export async function runThroughput(
  env: BenchEnv,
  nimbusqOver: "rest" | "tcp" = "rest",
): Promise<ThroughputResult> {
  const tcp = nimbusqOver === "tcp";
  const rounds = env.quick ? 1 : 3;
  const target = { host: env.server.host, port: env.server.port };
  let delayedRest: RestServer | undefined;
  let proxy: DelayProxy | undefined;
  const workers: Partial<Record<System, WorkerProcess>> = {};
  try {
    delayedRest = await startRestServer({
      redis: target,
      token: "bench-delayed",
      countScriptCalls: false,
      declaredKeys: false,
      upstashMode: false,
    });
    delayedRest.setFault({ kind: "delay", delayMs });
    proxy = await startDelayProxy(target, delayMs);
    const started = await Promise.allSettled([WorkerProcess.start("nimbusq"), WorkerProcess.start("bullmq")]);
    for (const s of started) if (s.status === "fulfilled") workers[s.value.system] = s.value;
    const nimbusq = workers.nimbusq;
    const bullmq = workers.bullmq;
    if (!nimbusq || !bullmq) throw new Error("a worker process did not start");
    const profiles: Endpoints[] = [
      { profile: "loopback", rest: { url: env.fast.url, token: env.fast.token }, tcp: target },
      {
        profile: "delayed",
        rest: { url: delayedRest.url, token: delayedRest.token },
        tcp: { host: proxy.host, port: proxy.port },
      },
    ];
    const measuredDelayMs = await measureDelay(env, profiles);
    env.log(
      `throughput: the delayed profile adds ${measuredDelayMs.rest} ms per HTTP request, ${measuredDelayMs.tcp} ms per TCP round trip`,
    );
    const calibrationConnections = proxy.accepted();
    const cases: ThroughputCase[] = [];
    for (const at of profiles) {
      // Warm-up, not kept: scripts loaded, connections and JIT warm on both sides.
      await runOnce(env, nimbusq, at, "no-op", 50, env.quick ? 100 : 1000, tcp);
      await runOnce(env, bullmq, at, "no-op", 50, env.quick ? 100 : 1000);
      for (const inFlight of inFlights) {
        for (const processor of processors) {
          const jobs = jobsFor(env.quick, processor, inFlight, tcp);
          const pairs: ThroughputCase["rounds"] = [];
          for (let i = 0; i < rounds; i++) {
            const ours = await runOnce(env, nimbusq, at, processor, inFlight, jobs, tcp);
            const theirs = await runOnce(env, bullmq, at, processor, inFlight, jobs);
            pairs.push({ nimbusq: ours, bullmq: theirs });
            env.log(
              `throughput${tcp ? " over TCP" : ""}: ${at.profile}, ${processorLabels[processor]}, ${inFlight} in flight, round ${i + 1}: nimbusq ${ours.jobsPerSecond} jobs/s, BullMQ ${theirs.jobsPerSecond} jobs/s`,
            );
          }
          cases.push(summarise(at, processor, inFlight, jobs, pairs));
        }
      }
    }
    // BullMQ's Worker really went through the proxy (its connection options name the proxy's port).
    if (proxy.accepted() <= calibrationConnections)
      throw new Error("BullMQ did not go through the delaying proxy");
    return { nimbusqOver, delayMs, measuredDelayMs, rounds, cases };
  } finally {
    await Promise.all(Object.values(workers).map((w) => w.stop()));
    await proxy?.close();
    await delayedRest?.close();
  }
}
