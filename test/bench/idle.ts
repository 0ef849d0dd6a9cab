/**
 * Section 4: what an idle deployment costs in billed commands per hour.
 *
 * BullMQ: idle Workers with default settings, counted by `INFO commandstats` over a window on a
 * redis-server of their own (one Worker; ten Workers on ten queues), so the window can run in the
 * background while the other sections use the main server. nimbusq: workers are not invoked when
 * nothing waits (0 commands); the sweeper's idle tick for the whole deployment (1, 10 and 20 queues
 * that have done work, metrics every 5th pass) is measured exactly on the metering REST server over
 * ten ticks and multiplied by 60 ticks an hour, in its default loop mode and in once-a-minute mode.
 * An idle QueueEvents at its defaults is counted over a window the same way.
 */
import { Worker as BullWorker } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { Queue, QueueEvents, Worker } from "../../core/index.ts";
import { drainInvocation } from "../../core/worker/invocation.ts";
import { sweeperHandler } from "../../functions/sweeper.ts";
import { startRedisServer } from "../../infra/redis-server.ts";
import { type BenchEnv, commandCounts, round, sleep, unique } from "./common.ts";

export interface BullmqIdle {
  workers: number;
  windowSeconds: number;
  commands: number;
  perHour: number;
  perHourPerQueue: number;
  /** Commands in the window by family, most first. */
  byCommand: Record<string, number>;
}

export interface SweeperIdle {
  mode: "loop" | "once";
  queues: number;
  eventForwarding: boolean;
  /** Billed commands of one idle tick (all queues). */
  perTick: number;
  perHour: number;
  perHourPerQueue: number;
}

export interface QueueEventsIdle {
  windowSeconds: number;
  /** Billed commands in the window. */
  commands: number;
  perHour: number;
}

export interface IdleResult {
  bullmq: BullmqIdle[];
  sweeper: SweeperIdle[];
  /** One QueueEvents at its defaults, nothing happening on its queue. */
  queueEvents?: QueueEventsIdle;
  /** Worker functions run only when invoked: an idle queue costs them nothing. */
  nimbusqWorkersPerHour: 0;
  /** Window the BullMQ counts were taken over; per-hour figures scale it up. */
  windowSeconds: number;
}

export interface BullmqIdleMeasurement {
  finish(): Promise<BullmqIdle[]>;
  /** Stops early without a result (a failed run). */
  abort(): Promise<void>;
}

async function countsWithoutInfo(direct: IORedis): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const [name, { calls }] of await commandCounts(direct)) if (name !== "info") counts.set(name, calls);
  return counts;
}

/** Starts idle BullMQ Workers on private redis-servers; `finish` waits out the window and counts. */
export async function startBullmqIdle(windowMs: number): Promise<BullmqIdleMeasurement> {
  const setups = await Promise.all(
    [1, 10].map(async (count) => {
      const server = await startRedisServer();
      const connection = { host: server.host, port: server.port, maxRetriesPerRequest: null };
      const direct = new IORedis(connection);
      const workers = Array.from(
        { length: count },
        (_, i) => new BullWorker(`idle-${i}`, async () => undefined, { connection }),
      );
      await Promise.all(workers.map((w) => w.waitUntilReady()));
      return { count, server, direct, workers };
    }),
  );
  // Start-up (connections, the first stalled check) stays out of the window.
  await sleep(2000);
  const before = await Promise.all(setups.map((s) => countsWithoutInfo(s.direct)));
  const started = Date.now();
  const stop = async () => {
    for (const s of setups) {
      await Promise.all(s.workers.map((w) => w.close()));
      s.direct.disconnect();
      await s.server.stop();
    }
  };
  return {
    abort: stop,
    finish: async () => {
      await sleep(Math.max(0, started + windowMs - Date.now()));
      const after = await Promise.all(setups.map((s) => countsWithoutInfo(s.direct)));
      const elapsed = Date.now() - started;
      await stop();
      return setups.map((s, i) => {
        const byCommand: Record<string, number> = {};
        let commands = 0;
        for (const [name, calls] of after[i] as Map<string, number>) {
          const diff = calls - ((before[i] as Map<string, number>).get(name) ?? 0);
          if (diff > 0) {
            byCommand[name] = diff;
            commands += diff;
          }
        }
        const perHour = (commands / elapsed) * 3_600_000;
        return {
          workers: s.count,
          windowSeconds: round(elapsed / 1000, 1),
          commands,
          perHour: Math.round(perHour),
          perHourPerQueue: Math.round(perHour / s.count),
          byCommand: Object.fromEntries(Object.entries(byCommand).sort((a, b) => b[1] - a[1])),
        };
      });
    },
  };
}

function lambdaContext() {
  const end = Date.now() + 60_000;
  return { awsRequestId: crypto.randomUUID(), getRemainingTimeInMillis: () => Math.max(0, end - Date.now()) };
}

/** Ticks measured per case: metrics go out every 5th pass by default, so the mean covers one. */
const measuredTicks = 10;

async function sweeperTick(
  env: BenchEnv,
  queues: number,
  mode: "loop" | "once",
  eventForwarding: boolean,
): Promise<SweeperIdle> {
  const names = Array.from({ length: queues }, (_, i) => `idle-${i}`);
  const prefix = unique("idle");
  const options = {
    queues: names,
    redis: env.meteredRedis,
    prefix,
    mode,
    metricsEveryPasses: 5,
    invoke: async () => undefined,
    releaseLock: true,
    ...(eventForwarding ? { eventBus: "bench-bus", publish: async () => ({ failed: [] }) } : {}),
  };
  // As deployed after some use: each queue has done work (a completed job kept, a worker registered
  // and gone); the first ticks load scripts, start the event cursors and forward those events.
  for (const name of names) {
    await new Queue(name, { redis: env.meteredRedis, prefix }).add("done", {});
    const worker = new Worker(name, async () => "ok", { redis: env.meteredRedis, prefix });
    await drainInvocation(worker, {
      deadline: Date.now() + 30_000,
      jobTimeoutMs: 1000,
      register: { id: crypto.randomUUID(), until: Date.now() + 60_000, onError: () => {} },
    });
    await worker.close();
  }
  // The container's first pass sweeps every queue, and the first metrics pass after it reads them
  // once more: both stay out of the measured steady state (the tests assert it is 1 a tick).
  const tick = sweeperHandler(options);
  for (let i = 0; i < 6; i++) await tick({}, lambdaContext());
  env.metered.resetStats();
  for (let i = 0; i < measuredTicks; i++) {
    const result = await tick({}, lambdaContext());
    if (result.passes !== 1) throw new Error(`an idle ${mode} tick made ${result.passes} passes`);
  }
  const perTick = round(env.metered.stats().billed / measuredTicks, 2);
  return {
    mode,
    queues,
    eventForwarding,
    perTick,
    perHour: perTick * 60,
    perHourPerQueue: round((perTick * 60) / queues, 1),
  };
}

export async function runSweeperIdle(env: BenchEnv): Promise<SweeperIdle[]> {
  const out: SweeperIdle[] = [];
  for (const eventForwarding of [true, false]) {
    for (const mode of ["loop", "once"] as const) {
      for (const queues of [1, 10, 20]) {
        const tick = await sweeperTick(env, queues, mode, eventForwarding);
        env.log(
          `idle: sweeper ${mode}, ${queues} queue(s), forwarding ${eventForwarding ? "on" : "off"}: ${tick.perTick} per tick`,
        );
        out.push(tick);
      }
    }
  }
  return out;
}

/** One idle QueueEvents at its defaults (poll.idleMs 5 s), counted on the metering REST server. */
export async function runQueueEventsIdle(env: BenchEnv, windowMs: number): Promise<QueueEventsIdle> {
  const events = new QueueEvents("idle-events", { redis: env.meteredRedis, prefix: unique("qe") });
  events.on("error", () => {});
  try {
    // Its first reads stay out of the window: the position, then empty polls doubling from 100 ms to
    // 5 s (6.3 s in all); the window sees the steady state.
    await sleep(8000);
    env.metered.resetStats();
    const started = Date.now();
    await sleep(windowMs);
    const commands = env.metered.stats().billed;
    const elapsed = Date.now() - started;
    return {
      windowSeconds: round(elapsed / 1000, 1),
      commands,
      perHour: Math.round((commands / elapsed) * 3_600_000),
    };
  } finally {
    await events.close();
  }
}
