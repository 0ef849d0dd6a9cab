/**
 * How long does each script call of the bounded maintenance operations hold Redis, at 100,000 jobs?
 * clean (a finished set and the wait list), retryJobs, promoteJobs, drain and obliterate each run on a
 * queue of 100,000 jobs on a private redis-server with `slowlog-log-slower-than 500` (µs); the longest
 * EVALSHA in SLOWLOG (the time Redis spent in the script) is reported with the number of calls, the
 * longest call seen by the client (through the local REST server) and the total. BullMQ 6.7.0's drain
 * and clean on the same data are measured alongside for comparison.
 *
 *   npx tsx test/bench/maintenance-scale.ts [jobs]      (default 100000; not part of `npm test`)
 */
import { Queue as BullQueue } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { createRedis, type JobsOptions, Queue, type RedisPort, toRedisPort } from "../../core/index.ts";
import { startRedisServer } from "../../infra/redis-server.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";

const jobs = Number(process.argv[2] ?? 100_000);

interface Row {
  operation: string;
  jobs: number;
  calls: number;
  longestScriptMs: number;
  medianScriptMs: number;
  longestCallMs: number;
  totalMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** A port that times every script call (the brand makes toRedisPort take it as is). */
function timedPort(inner: RedisPort, calls: number[]): RedisPort {
  const timed = async <T>(run: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await run();
    } finally {
      calls.push(performance.now() - start);
    }
  };
  return {
    [Symbol.for("nimbusq.redisPort")]: true,
    evalsha: (sha, keys, args) => timed(() => inner.evalsha(sha, keys, args)),
    eval: (source, keys, args) => timed(() => inner.eval(source, keys, args)),
    hgetall: (key) => inner.hgetall(key),
  } as RedisPort;
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const rest = await startRestServer({
    redis: { host: server.host, port: server.port },
    token: "bench",
    countScriptCalls: false,
  });
  const direct = new IORedis({ host: server.host, port: server.port, maxRetriesPerRequest: null });
  const port = toRedisPort(createRedis({ url: rest.url, token: rest.token }));
  const prefix = "scale";
  const rows: Row[] = [];
  try {
    // Redis 7 also logs the commands a script runs: a threshold of 0 would log (and pay for) every one
    // of them and slow the scripts down; 0.5 ms keeps them out and still catches every step.
    await direct.config("SET", "slowlog-log-slower-than", "500");
    await direct.config("SET", "slowlog-max-len", "100000");

    const fill = async (name: string, opts: (i: number) => JobsOptions | undefined) => {
      const queue = new Queue(name, { redis: port, prefix });
      for (let from = 0; from < jobs; from += 1000) {
        const batch = Array.from({ length: Math.min(1000, jobs - from) }, (_, k) => ({
          name: "job",
          data: { i: from + k, pad: "x".repeat(64) },
          opts: opts(from + k),
        }));
        await queue.addBulk(batch);
      }
    };
    /** Turns the waiting jobs of a queue into finished ones, as a worker would have left them. */
    const finish = async (name: string, set: "failed" | "completed") => {
      const p = `${prefix}:${name}:`;
      const ids = await direct.lrange(`${p}wait`, 0, -1);
      const now = Date.now() - 60_000;
      for (let from = 0; from < ids.length; from += 5000) {
        const pipe = direct.pipeline();
        for (const id of ids.slice(from, from + 5000)) {
          pipe.zadd(`${p}${set}`, now, id);
          pipe.hset(`${p}${id}`, "processedOn", now, "finishedOn", now, "atm", 1, "ats", 1);
          pipe.hset(
            `${p}${id}`,
            set === "failed" ? "failedReason" : "returnvalue",
            set === "failed" ? "boom" : "1",
          );
        }
        await pipe.exec();
      }
      await direct.del(`${p}wait`, `${p}marker`);
    };
    /** Runs one operation and reads the script runs SLOWLOG saw during it (durations in µs). */
    const scriptRuns = async (run: () => Promise<unknown>) => {
      await direct.slowlog("RESET");
      const start = performance.now();
      await run();
      const totalMs = performance.now() - start;
      const log = (await direct.call("SLOWLOG", "GET", "-1")) as [number, number, number, string[]][];
      return { totalMs, scripts: log.filter(([, , , args]) => /^(evalsha|eval)$/i.test(String(args[0]))) };
    };
    const measure = async (operation: string, run: (queue: Queue) => Promise<unknown>, name: string) => {
      const calls: number[] = [];
      const queue = new Queue(name, { redis: timedPort(port, calls), prefix });
      const { totalMs, scripts } = await scriptRuns(() => run(queue));
      rows.push({
        operation,
        jobs,
        calls: calls.length,
        longestScriptMs: Math.max(0, ...scripts.map(([, , us]) => us / 1000)),
        medianScriptMs: median(scripts.map(([, , us]) => us / 1000)),
        longestCallMs: Math.max(0, ...calls),
        totalMs,
      });
      console.error(`  ${operation}: done`);
    };
    const measureBull = async (
      operation: string,
      run: (queue: BullQueue) => Promise<unknown>,
      name: string,
    ) => {
      const queue = new BullQueue(name, { connection: { host: server.host, port: server.port }, prefix });
      await queue.waitUntilReady();
      const { totalMs, scripts } = await scriptRuns(() => run(queue));
      rows.push({
        operation,
        jobs,
        // Calls under the slowlog threshold are not seen here; BullMQ's are far above it.
        calls: scripts.length,
        longestScriptMs: Math.max(0, ...scripts.map(([, , us]) => us / 1000)),
        medianScriptMs: median(scripts.map(([, , us]) => us / 1000)),
        longestCallMs: Number.NaN,
        totalMs,
      });
      await queue.close();
    };

    console.error(`filling queues with ${jobs} jobs each…`);
    await fill("clean-failed", () => undefined);
    await finish("clean-failed", "failed");
    await measure("clean(0, 0, 'failed')", (q) => q.clean(0, 0, "failed"), "clean-failed");

    await fill("clean-wait", () => ({ timestamp: Date.now() - 60_000 }));
    await measure("clean(0, 0, 'wait')", (q) => q.clean(0, 0, "wait"), "clean-wait");

    await fill("retry", () => undefined);
    await finish("retry", "failed");
    await measure("retryJobs()", (q) => q.retryJobs(), "retry");

    await fill("promote", () => ({ delay: 3_600_000 }));
    await measure("promoteJobs()", (q) => q.promoteJobs(), "promote");

    const mixed = (i: number): JobsOptions | undefined =>
      i % 4 === 1 ? { priority: 1 + (i % 7) } : i % 4 === 2 ? { delay: 3_600_000 + i } : undefined;
    await fill("drain", mixed);
    await measure("drain(true)", (q) => q.drain(true), "drain");

    await fill("obliterate", mixed);
    await measure("obliterate()", (q) => q.obliterate(), "obliterate");

    await fill("bull-drain", mixed);
    await measureBull("BullMQ drain(true)", (q) => q.drain(true), "bull-drain");
    await fill("bull-clean", () => undefined);
    await finish("bull-clean", "failed");
    await measureBull("BullMQ clean(0, 0, 'failed')", (q) => q.clean(0, 0, "failed"), "bull-clean");
  } finally {
    direct.disconnect();
    await rest.close();
    await server.stop();
  }
  console.log(
    `| operation (${jobs} jobs) | script calls | longest script in Redis (ms) | median script (ms) | longest call via REST (ms) | total (ms) |`,
  );
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const row of rows) {
    const call = Number.isNaN(row.longestCallMs) ? "–" : row.longestCallMs.toFixed(1);
    console.log(
      `| ${row.operation} | ${row.calls} | ${row.longestScriptMs.toFixed(1)} | ${row.medianScriptMs.toFixed(1)} | ${call} | ${row.totalMs.toFixed(0)} |`,
    );
  }
}

await main();
