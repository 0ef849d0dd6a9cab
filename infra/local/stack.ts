/**
 * The whole nimbusq stack on one machine, no cloud: redis-server, the Upstash-compatible REST
 * server, the HTTP API with Bull Board beside it, worker "Lambdas" run in-process with real deadlines
 * and concurrency caps, and the sweeper ticked on a timer as EventBridge would.
 */
import { serve } from "@hono/node-server";
import { createRedis } from "../../core/index.ts";
import { demoQueues } from "../../examples/demo/demo-queues.ts";
import { cappedWorkerKick } from "../../functions/config/workers-env.ts";
import { createHttpApp } from "../../functions/http/index.ts";
import { sweeperHandler } from "../../functions/sweeper.ts";
import { type WorkerEvent, workerHandler } from "../../functions/worker.ts";
import { type RedisServer, startRedisServer } from "../redis-server.ts";
import { type RestServer, startRestServer } from "../rest-server/server.ts";
import { bullBoardPath, createBoard } from "./bull-board.ts";
import { type LocalEventBus, localEventBus } from "./event-bus.ts";
import { LocalLambda } from "./local-lambda.ts";

export interface LocalStackOptions {
  /** Use this redis-server instead of starting one. */
  redisUrl?: string;
  /**
   * How the functions (HTTP API, workers, sweeper) reach Redis: through the local REST server, as on
   * Upstash (default), or over TCP straight to redis-server, as with ElastiCache or a cluster
   * (createRedis with a redis:// URL). Bull Board reads over TCP either way.
   */
  transport?: "rest" | "tcp";
  restPort?: number;
  httpPort?: number;
  /** The API's bearer token (admin). */
  apiToken?: string;
  /** The sweeper's tick (ms); EventBridge's is a minute, locally shorter is livelier. */
  tickMs?: number;
  workerTimeoutMs?: number;
  /** BullMQ's stalled-check interval the sweeper uses (default 30000). */
  stalledInterval?: number;
  log?: (source: string, line: string) => void;
}

export interface LocalStack {
  apiUrl: string;
  restUrl: string;
  restToken: string;
  apiToken: string;
  redis: { host: string; port: number };
  lambda: LocalLambda;
  events: LocalEventBus;
  sweepNow(): Promise<void>;
  stop(): Promise<void>;
}

function parseRedisUrl(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  if (parsed.protocol !== "redis:") throw new Error(`REDIS_URL must start with redis://, got ${url}`);
  return { host: parsed.hostname, port: Number(parsed.port || 6379) };
}

/** A port the stack listens on is taken; `server` says which (`http`: the API and Bull Board). */
export class PortInUseError extends Error {
  override name = "PortInUseError";
  constructor(
    readonly server: "http" | "rest",
    readonly port: number,
  ) {
    super(`port ${port} on 127.0.0.1 is already in use (${server === "http" ? "HTTP API" : "REST server"})`);
  }
}

function portInUse(error: unknown, server: "http" | "rest", port: number): unknown {
  return (error as NodeJS.ErrnoException)?.code === "EADDRINUSE" ? new PortInUseError(server, port) : error;
}

/**
 * Starts the stack. If any part fails to start (redis-server missing, a port taken), the parts
 * already started are stopped (the redis-server and its temp directory included) before it throws.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const started: (() => Promise<void>)[] = [];
  try {
    return await startParts(options, started);
  } catch (error) {
    for (const stop of started.reverse()) await stop().catch(() => {});
    throw error;
  }
}

async function startParts(options: LocalStackOptions, started: (() => Promise<void>)[]): Promise<LocalStack> {
  const log = options.log ?? ((source, line) => console.log(`[${source}] ${line}`));
  let ownRedis: RedisServer | undefined;
  const target = options.redisUrl
    ? parseRedisUrl(options.redisUrl)
    : await startRedisServer().then((server) => {
        ownRedis = server;
        started.push(() => server.stop());
        return { host: server.host, port: server.port };
      });
  const restToken = "local-rest-token";
  const restPort = options.restPort ?? 8079;
  const rest: RestServer = await startRestServer({ redis: target, token: restToken, port: restPort }).catch(
    (error: unknown) => {
      throw portInUse(error, "rest", restPort);
    },
  );
  started.push(() => rest.close());
  const tcp =
    options.transport === "tcp" ? createRedis({ url: `redis://${target.host}:${target.port}` }) : undefined;
  if (tcp) started.push(() => tcp.close());
  const redis = tcp ?? createRedis({ url: rest.url, token: restToken });
  const tickMs = options.tickMs ?? 10_000;
  const workerTimeoutMs = options.workerTimeoutMs ?? 60_000;
  const lambda = new LocalLambda((record) => {
    if (process.env.NIMBUSQ_DEBUG) log("debug", JSON.stringify(record));
    const result = record.result as { completed?: number; failed?: number; retried?: number } | undefined;
    if (record.error)
      log("lambda", `${record.functionName} failed after ${record.durationMs} ms: ${record.error}`);
    else if (record.timedOut) log("lambda", `${record.functionName} timed out after ${record.durationMs} ms`);
    else if (record.functionName === "sweeper") {
      const swept = record.result as {
        passes?: number;
        invoked?: Record<string, number>;
        stalled?: number;
        promoted?: number;
      };
      const invoked = Object.entries(swept?.invoked ?? {})
        .map(([q, n]) => `${q}×${n}`)
        .join(" ");
      if (invoked || swept?.stalled || swept?.promoted)
        log(
          "lambda",
          `sweeper: ${swept?.passes ?? 0} passes, promoted ${swept?.promoted ?? 0}, stalled ${swept?.stalled ?? 0}${invoked ? `, invoked ${invoked}` : ""}`,
        );
    } else if (result)
      log(
        "lambda",
        `${record.functionName}: ${result.completed ?? 0} completed, ${result.retried ?? 0} retried, ${result.failed ?? 0} failed in ${record.durationMs} ms`,
      );
  });
  const events = localEventBus((line) => log("eventbridge", line));
  for (const queue of demoQueues) {
    const worker = workerHandler({
      queue: queue.name,
      processor: queue.processor,
      redis,
      batchSize: queue.batchSize,
      concurrency: queue.concurrency,
      jobTimeoutMs: queue.jobTimeoutMs,
      ...(queue.deadLetter ? { deadLetter: queue.deadLetter } : {}),
      invoke: lambda.invoke,
    });
    lambda.register(`${queue.name}-worker`, {
      timeoutMs: workerTimeoutMs,
      reservedConcurrency: queue.maxWorkers,
      handler: (event, context) => worker(event as WorkerEvent, context),
    });
  }
  const sweptQueues = demoQueues.map((q) => ({
    name: q.name,
    workerFunction: `${q.name}-worker`,
    batchSize: q.batchSize,
    maxWorkers: q.maxWorkers,
  }));
  const sweeper = sweeperHandler({
    queues: sweptQueues,
    redis,
    tickMs,
    marginMs: Math.min(2000, tickMs / 5),
    eventBus: "local-bus",
    stalledInterval: options.stalledInterval ?? 30_000,
    invoke: lambda.invoke,
    publish: events.publish,
    releaseLock: true,
  });
  lambda.register("sweeper", { timeoutMs: tickMs, reservedConcurrency: 1, handler: sweeper });
  started.push(() => lambda.stop(0));
  const apiToken = options.apiToken ?? "dev-token";
  const api = createHttpApp({
    redis,
    tokens: [{ token: apiToken, admin: true }],
    // The dead-letter queues too, so `GET /queues/email-dlq` shows what failed for good.
    queues: demoQueues.flatMap((q) => [q.name, ...(q.deadLetter ? [q.deadLetter.queue] : [])]),
    // Per-queue defaults, as NIMBUSQ_QUEUE_DEFAULTS sets them when deployed: curl's jobs get retries.
    queueDefaultJobOptions: Object.fromEntries(demoQueues.map((q) => [q.name, q.defaultJobOptions])),
    // As deployed: no invoke when the queue already has its maxWorkers running.
    kick: cappedWorkerKick(sweptQueues, lambda.invoke, () => ({ redis }), { reason: "kick" }),
    // The sweeper's tick: a delayed job due before the next one gets a kick with its due time.
    wakeWithinMs: tickMs,
  });
  const board = createBoard(target, {
    queues: demoQueues.map((q) => q.name),
    refreshMs: Math.min(tickMs, 10_000),
  });
  await board.refresh();
  started.push(() => board.close());
  const httpPort = options.httpPort ?? 3000;
  const server = serve({
    fetch: (request: Request) =>
      new URL(request.url).pathname.startsWith(bullBoardPath) ? board.app.fetch(request) : api.fetch(request),
    port: httpPort,
    hostname: "127.0.0.1",
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", (error) => reject(portInUse(error, "http", httpPort)));
  });
  started.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  const apiUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const sweepNow = () => lambda.invoke("sweeper", { source: "local.timer" });
  // The first tick ends before the stack is handed over: its pass of every queue sees none of the demo.
  await lambda.invokeAndWait("sweeper", { source: "local.timer" });
  const ticker = setInterval(() => void sweepNow(), tickMs);
  return {
    apiUrl,
    restUrl: rest.url,
    restToken,
    apiToken,
    redis: target,
    lambda,
    events,
    sweepNow,
    stop: async () => {
      clearInterval(ticker);
      await lambda.stop(Math.min(workerTimeoutMs, 10_000));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await board.close();
      await rest.close();
      await ownRedis?.stop();
    },
  };
}
