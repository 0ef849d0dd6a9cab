/**
 * The local stack the latency sections run (test/bench/latency.ts, latency-profiled.ts,
 * wake-lateness.ts): assembled as `startLocalStack` assembles it — the HTTP API with the worker kick,
 * worker "Lambdas" run in-process with real deadlines, the sweeper in loop mode — with a bench queue
 * whose processor records when it starts; and enqueue → start on it, one job at a time, from just
 * before the POST (nimbusq, through the HTTP API and the kicked worker invocation) or the `Queue.add`
 * call (BullMQ, over TCP to its running Worker) to the processor's first line, on one monotonic clock.
 */
import { serve } from "@hono/node-server";
import type { Redis } from "@upstash/redis";
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import type { ActiveJob } from "../../core/index.ts";
import { cappedWorkerKick, type WorkerKick } from "../../functions/config/workers-env.ts";
import { createHttpApp } from "../../functions/http/index.ts";
import { sweeperHandler } from "../../functions/sweeper.ts";
import { type WorkerEvent, workerHandler } from "../../functions/worker.ts";
import { LocalLambda } from "../../infra/local/local-lambda.ts";
import { type BenchEnv, billedTotal, flush, quantile, round, sleep, unique, waitUntil } from "./common.ts";
import { startDelayProxy } from "./delay-proxy.ts";

export interface Distribution {
  samples: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}
export function distribution(samples: number[]): Distribution {
  const mean = samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);
  return {
    samples: samples.length,
    p50: round(quantile(samples, 0.5), 2),
    p99: round(quantile(samples, 0.99), 2),
    max: round(Math.max(...samples), 2),
    mean: round(mean, 2),
  };
}

export type BenchProcessor = (job: ActiveJob) => Promise<unknown>;

export interface BenchStack {
  apiUrl: string;
  apiToken: string;
  lambda: LocalLambda;
  /** The HTTP API's kick (registry-capped, handing lone jobs over), for producers in a bench. */
  kick: WorkerKick;
  /** Invocations still running, by function. */
  running(name: string): number;
  invocations(name: string): number;
  sweeperPasses(): number;
  stop(): Promise<void>;
}

export async function startStack(
  env: BenchEnv,
  queue: string,
  prefix: string,
  processor: BenchProcessor,
  sweeperTickMs: number,
): Promise<BenchStack> {
  const redis = env.fastRedis;
  const started = new Map<string, number>();
  const ended = new Map<string, number>();
  let passes = 0;
  const lambda = new LocalLambda((record) => {
    ended.set(record.functionName, (ended.get(record.functionName) ?? 0) + 1);
    if (record.functionName === "sweeper")
      passes += (record.result as { passes?: number } | undefined)?.passes ?? 0;
  });
  const counted = <E, C, R>(name: string, handler: (event: E, context: C) => Promise<R>) => {
    return (event: E, context: C) => {
      started.set(name, (started.get(name) ?? 0) + 1);
      return handler(event, context);
    };
  };
  const workerName = `${queue}-worker`;
  const worker = workerHandler({
    queue,
    prefix,
    processor,
    redis,
    batchSize: 50,
    concurrency: 50,
    jobTimeoutMs: 2000,
    safetyMarginMs: 1000,
    invoke: lambda.invoke,
  });
  lambda.register(workerName, {
    timeoutMs: 60_000,
    reservedConcurrency: 4,
    handler: counted(workerName, (event, context) => worker(event as WorkerEvent, context)),
  });
  const sweeper = sweeperHandler({
    queues: [{ name: queue, workerFunction: workerName, batchSize: 50, maxWorkers: 4 }],
    redis,
    prefix,
    tickMs: sweeperTickMs,
    marginMs: 1000,
    invoke: lambda.invoke,
    releaseLock: true,
  });
  lambda.register("sweeper", {
    timeoutMs: sweeperTickMs,
    reservedConcurrency: 1,
    handler: counted("sweeper", sweeper),
  });
  const apiToken = "bench-api-token";
  // As the local stack and the deployed HTTP API: the registry-capped kick, whose lone adds hand
  // their job to the invocation they start.
  const kick = cappedWorkerKick(
    [{ name: queue, workerFunction: workerName, maxWorkers: 4 }],
    lambda.invoke,
    () => ({
      redis,
      prefix,
    }),
  );
  const api = createHttpApp({
    redis,
    prefix,
    tokens: [{ token: apiToken, admin: true }],
    queues: [queue],
    kick,
  });
  const server = serve({ fetch: api.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  let stopped = false;
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    apiToken,
    lambda,
    kick,
    running: (name) => (started.get(name) ?? 0) - (ended.get(name) ?? 0),
    invocations: (name) => started.get(name) ?? 0,
    sweeperPasses: () => passes,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await lambda.stop(15_000);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A network profile: the REST server the stack uses, and a delay added to the POST (a TCP proxy). */
export interface EnqueuePath {
  redis: Redis;
  postDelayMs: number;
}

export async function nimbusqEnqueueToStart(env: BenchEnv, count: number, warm: number, path?: EnqueuePath) {
  const queue = unique("lat-nq");
  const starts = new Map<number, number>();
  const stack = await startStack(
    path ? { ...env, fastRedis: path.redis } : env,
    queue,
    unique("p"),
    async (job) => {
      starts.set((job.data as { k: number }).k, performance.now());
    },
    10_000,
  );
  const latencies: number[] = [];
  const posts: number[] = [];
  let before = 0;
  const apiPort = Number(new URL(stack.apiUrl).port);
  const proxy = path
    ? await startDelayProxy({ host: "127.0.0.1", port: apiPort }, path.postDelayMs)
    : undefined;
  const apiUrl = proxy ? `http://127.0.0.1:${proxy.port}` : stack.apiUrl;
  try {
    for (let k = 0; k < warm + count; k++) {
      if (k === warm) before = await billedTotal(env.direct);
      const sent = performance.now();
      const response = await fetch(`${apiUrl}/queues/${queue}/jobs`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "lat", data: { k } }),
      });
      await response.arrayBuffer();
      const answered = performance.now();
      if (response.status !== 202) throw new Error(`POST answered ${response.status}`);
      if (!(await waitUntil(() => starts.has(k), 5000, 1))) throw new Error(`job ${k} did not start in 5 s`);
      await waitUntil(() => stack.running(`${queue}-worker`) === 0, 5000, 1);
      if (k >= warm) {
        latencies.push((starts.get(k) as number) - sent);
        posts.push(answered - sent);
      }
      await sleep(2);
    }
    const billed = (await billedTotal(env.direct)) - before;
    return {
      latencies,
      posts,
      invocations: stack.invocations(`${queue}-worker`) / (warm + count),
      billedPerJob: billed / count,
    };
  } finally {
    await proxy?.close();
    await stack.stop();
    await flush(env);
  }
}

export async function bullmqEnqueueToStart(
  env: BenchEnv,
  count: number,
  warm: number,
  connection: BenchEnv["connection"] = env.connection,
) {
  const name = unique("lat-bq");
  const starts = new Map<number, number>();
  const queue = new BullQueue(name, { connection });
  const worker = new BullWorker(
    name,
    async (job) => {
      starts.set((job.data as { k: number }).k, performance.now());
    },
    { connection, concurrency: 50 },
  );
  let completed = 0;
  worker.on("completed", () => {
    completed += 1;
  });
  const latencies: number[] = [];
  try {
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    await sleep(200);
    let before = 0;
    for (let k = 0; k < warm + count; k++) {
      if (k === warm) before = await billedTotal(env.direct);
      const sent = performance.now();
      await queue.add("lat", { k });
      if (!(await waitUntil(() => starts.has(k), 5000, 1))) throw new Error(`job ${k} did not start in 5 s`);
      await waitUntil(() => completed > k, 5000, 1);
      if (k >= warm) latencies.push((starts.get(k) as number) - sent);
      await sleep(2);
    }
    return { latencies, billedPerJob: ((await billedTotal(env.direct)) - before) / count };
  } finally {
    await worker.close(true);
    await queue.close();
    await flush(env);
  }
}
