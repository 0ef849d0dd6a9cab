/**
 * Section 5: latency, over the local stack of latency-stack.ts.
 *
 * - enqueue → start: one job at a time (latency-stack.ts), on loopback and with a delay added to every
 *   request (latency-profiled.ts).
 * - delayed lateness: jobs due over a span, added in one bulk; lateness is the processor's start minus
 *   the due time (timestamp + delay). nimbusq relies on one sweeper tick in loop mode, which sleeps
 *   until the next due job and starts workers; those wait for delayed jobs due within 5 s.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { Queue } from "../../core/index.ts";
import {
  type BenchEnv,
  billedTotal,
  flush,
  median,
  quantile,
  round,
  sleep,
  unique,
  waitUntil,
} from "./common.ts";
import { type ProfiledEnqueueToStart, runProfiledEnqueueToStart } from "./latency-profiled.ts";
import {
  bullmqEnqueueToStart,
  type Distribution,
  distribution,
  nimbusqEnqueueToStart,
  startStack,
} from "./latency-stack.ts";
import { runWakeLateness, type WakeLateness, wakePaths } from "./wake-lateness.ts";

export type { Distribution };

export interface LatencyResult {
  enqueueToStart: {
    nimbusq: Distribution;
    /** The POST's own round trip (answered after the add and the kick). */
    nimbusqHttpAdd: Distribution;
    /** One bare loopback HTTP request (Node's fetch to a server that answers at once): the floor of a hop. */
    bareFetch?: Distribution;
    bullmq: Distribution;
    rounds: number;
    perRound: number;
    /** Worker invocations per job (one kick per add). */
    nimbusqInvocationsPerJob: number;
    /** Every command Redis ran per job in these runs (INFO commandstats), add to completion. */
    nimbusqBilledPerJob: number;
    bullmqBilledPerJob: number;
    /** The same with a delay added to every network request on both sides (latency-profiled.ts). */
    delayed?: ProfiledEnqueueToStart;
  };
  delayedLateness: {
    jobs: number;
    spanMs: number;
    nimbusq: Distribution;
    bullmq: Distribution;
    rounds: number;
    nimbusqWorkerInvocations: number;
    nimbusqSweeperPasses: number;
    nimbusqBilledPerJob: number;
    bullmqBilledPerJob: number;
  };
  /** Delayed jobs through each producer path into an idle deployment (test/bench/wake-lateness.ts). */
  wakeLateness?: WakeLateness[];
}
interface DelayedPlan {
  jobs: number;
  leadMs: number;
  spanMs: number;
}

function delayedJobs(plan: DelayedPlan) {
  const timestamp = Date.now();
  return Array.from({ length: plan.jobs }, (_, i) => {
    const due = timestamp + plan.leadMs + Math.floor((i * plan.spanMs) / plan.jobs);
    return { name: "late", data: { due }, opts: { timestamp, delay: due - timestamp } };
  });
}

async function nimbusqLateness(env: BenchEnv, plan: DelayedPlan) {
  const queue = unique("late-nq");
  const prefix = unique("p");
  const lateness: number[] = [];
  const stack = await startStack(
    env,
    queue,
    prefix,
    async (job) => {
      lateness.push(Date.now() - (job.data as { due: number }).due);
    },
    plan.leadMs + plan.spanMs + 3000,
  );
  try {
    const before = await billedTotal(env.direct);
    await new Queue(queue, { redis: env.fastRedis, prefix }).addBulk(delayedJobs(plan));
    // One EventBridge tick: the sweeper loops, sleeping until each next due job.
    await stack.lambda.invoke("sweeper", { source: "bench" });
    const done = await waitUntil(() => lateness.length >= plan.jobs, plan.leadMs + plan.spanMs + 15_000, 5);
    if (!done) throw new Error(`nimbusq: ${lateness.length} of ${plan.jobs} delayed jobs ran`);
    // The sweeper reports its passes when its invocation ends.
    await stack.stop();
    return {
      lateness,
      invocations: stack.invocations(`${queue}-worker`),
      passes: stack.sweeperPasses(),
      billedPerJob: ((await billedTotal(env.direct)) - before) / plan.jobs,
    };
  } finally {
    await stack.stop();
    await flush(env);
  }
}

async function bullmqLateness(env: BenchEnv, plan: DelayedPlan) {
  const name = unique("late-bq");
  const lateness: number[] = [];
  const queue = new BullQueue(name, { connection: env.connection });
  const worker = new BullWorker(
    name,
    async (job) => {
      lateness.push(Date.now() - (job.data as { due: number }).due);
    },
    { connection: env.connection, concurrency: 50 },
  );
  try {
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    await sleep(200);
    const before = await billedTotal(env.direct);
    await queue.addBulk(delayedJobs(plan));
    const done = await waitUntil(() => lateness.length >= plan.jobs, plan.leadMs + plan.spanMs + 15_000, 5);
    if (!done) throw new Error(`BullMQ: ${lateness.length} of ${plan.jobs} delayed jobs ran`);
    await sleep(50);
    return { lateness, billedPerJob: ((await billedTotal(env.direct)) - before) / plan.jobs };
  } finally {
    await worker.close(true);
    await queue.close();
    await flush(env);
  }
}

/** Round trips of one bare loopback request (Node's fetch; the server answers at once), after a warm-up. */
async function bareFetchRoundTrips(count: number): Promise<number[]> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.end("ok"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const samples: number[] = [];
  try {
    for (let i = 0; i < count + 50; i++) {
      const sent = performance.now();
      await (await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" })).text();
      if (i >= 50) samples.push(performance.now() - sent);
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return samples;
}

/** The delay the profiled enqueue → start adds to each request: the throughput bench's 2 ms. */
const profiledDelayMs = 2;

export async function runLatency(env: BenchEnv): Promise<LatencyResult> {
  const quick = env.quick;
  const rounds = quick ? 1 : 3;
  const perRound = quick ? 10 : 100;
  const warm = quick ? 2 : 5;
  const ours: number[] = [];
  const posts: number[] = [];
  const theirs: number[] = [];
  const ourBilled: number[] = [];
  const theirBilled: number[] = [];
  let invocationsPerJob = 0;
  for (let r = 0; r < rounds; r++) {
    const nimbusq = await nimbusqEnqueueToStart(env, perRound, warm);
    ours.push(...nimbusq.latencies);
    posts.push(...nimbusq.posts);
    ourBilled.push(nimbusq.billedPerJob);
    invocationsPerJob = nimbusq.invocations;
    const bullmq = await bullmqEnqueueToStart(env, perRound, warm);
    theirs.push(...bullmq.latencies);
    theirBilled.push(bullmq.billedPerJob);
    env.log(
      `latency: enqueue→start round ${r + 1}: nimbusq p50 ${round(quantile(nimbusq.latencies, 0.5))} ms, BullMQ p50 ${round(quantile(bullmq.latencies, 0.5))} ms`,
    );
  }
  const profiled = await runProfiledEnqueueToStart(env, profiledDelayMs);
  const bareFetch = await bareFetchRoundTrips(quick ? 50 : 500);
  const plan: DelayedPlan = quick
    ? { jobs: 40, leadMs: 800, spanMs: 1000 }
    : { jobs: 1000, leadMs: 1500, spanMs: 10_000 };
  const lateRounds = quick ? 1 : 2;
  const ourLate: number[] = [];
  const theirLate: number[] = [];
  const ourLateBilled: number[] = [];
  const theirLateBilled: number[] = [];
  let invocations = 0;
  let passes = 0;
  for (let r = 0; r < lateRounds; r++) {
    const nimbusq = await nimbusqLateness(env, plan);
    ourLate.push(...nimbusq.lateness);
    ourLateBilled.push(nimbusq.billedPerJob);
    invocations += nimbusq.invocations;
    passes += nimbusq.passes;
    const bullmq = await bullmqLateness(env, plan);
    theirLate.push(...bullmq.lateness);
    theirLateBilled.push(bullmq.billedPerJob);
    env.log(
      `latency: delayed round ${r + 1}: nimbusq p99 ${quantile(nimbusq.lateness, 0.99)} ms, BullMQ p99 ${quantile(bullmq.lateness, 0.99)} ms`,
    );
  }
  const wakeLateness: WakeLateness[] = [];
  for (const path of wakePaths) {
    const measured = await runWakeLateness(env, path, quick ? 5 : 20);
    wakeLateness.push(measured);
    env.log(`latency: delayed via ${path} into an idle deployment: p99 ${measured.lateness.p99} ms`);
  }
  return {
    wakeLateness,
    enqueueToStart: {
      nimbusq: distribution(ours),
      nimbusqHttpAdd: distribution(posts),
      bareFetch: distribution(bareFetch),
      bullmq: distribution(theirs),
      rounds,
      perRound,
      nimbusqInvocationsPerJob: round(invocationsPerJob, 2),
      nimbusqBilledPerJob: round(median(ourBilled), 2),
      bullmqBilledPerJob: round(median(theirBilled), 2),
      delayed: profiled,
    },
    delayedLateness: {
      jobs: plan.jobs,
      spanMs: plan.spanMs,
      nimbusq: distribution(ourLate),
      bullmq: distribution(theirLate),
      rounds: lateRounds,
      nimbusqWorkerInvocations: round(invocations / lateRounds, 1),
      nimbusqSweeperPasses: round(passes / lateRounds, 1),
      nimbusqBilledPerJob: round(median(ourLateBilled), 2),
      bullmqBilledPerJob: round(median(theirLateBilled), 2),
    },
  };
}
