/**
 * How long does each script call of the bounded maintenance operations and the large reads hold Redis?
 * clean, retryJobs, promoteJobs, drain, obliterate, getJobCounts and getJobs over a range of 100,000
 * each run on a queue of `jobs` jobs on a private redis-server. While an operation runs
 * `slowlog-log-slower-than` is 0, and after every script call the client reads that call's EVALSHA
 * entry from SLOWLOG (the time Redis spent in the script) and resets the log, so no call is missed
 * however many commands the scripts run. Reported per operation: the number of calls, the slowest and
 * the median script in Redis, the longest call seen by the client (through the local REST server) and
 * the total. The bound to keep: no script over 20 ms. With `--bullmq`, BullMQ 6.7.0's drain and clean
 * on the same data are measured alongside (from SLOWLOG at a 0.5 ms threshold).
 *
 *   npx tsx test/bench/maintenance-scale.ts [jobs] [--bullmq]   (default 100000; not part of `npm test`)
 */
import { Queue as BullQueue } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { createRedis, type JobsOptions, Queue, type RedisPort, toRedisPort } from "../../core/index.ts";
import { startRedisServer } from "../../infra/redis-server.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";

const jobs = Number(process.argv.slice(2).find((arg) => !arg.startsWith("--")) ?? 100_000);
const withBull = process.argv.includes("--bullmq");
/** The bound every script call must keep (ms). */
const boundMs = 20;

interface Row {
  operation: string;
  jobs: number;
  calls: number;
  longestScriptMs: number;
  medianScriptMs: number;
  longestCallMs: number;
  totalMs: number;
}

type SlowlogEntry = [number, number, number, string[]];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function isScript(entry: SlowlogEntry): boolean {
  return /^(evalsha|eval)$/i.test(String(entry[3][0]));
}

/**
 * A port that times every script call and, after it, reads the call's own SLOWLOG entry (Redis logs
 * the EVALSHA after the commands it ran, so it is the newest script entry) into `scriptUs`.
 */
function timedPort(inner: RedisPort, direct: IORedis, calls: number[], scriptUs: number[]): RedisPort {
  const timed = async <T>(run: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await run();
    } finally {
      calls.push(performance.now() - start);
      const log = (await direct.call("SLOWLOG", "GET", "16")) as SlowlogEntry[];
      const entry = log.find(isScript);
      if (entry) scriptUs.push(entry[2]);
      await direct.slowlog("RESET");
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
    await direct.config("SET", "slowlog-max-len", "128");

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
    /** Runs one BullMQ operation and reads the script runs SLOWLOG saw at 0.5 ms or more (µs). */
    const scriptRuns = async (run: () => Promise<unknown>) => {
      await direct.config("SET", "slowlog-max-len", "100000");
      await direct.config("SET", "slowlog-log-slower-than", "500");
      await direct.slowlog("RESET");
      const start = performance.now();
      await run();
      const totalMs = performance.now() - start;
      const log = (await direct.call("SLOWLOG", "GET", "-1")) as SlowlogEntry[];
      await direct.config("SET", "slowlog-log-slower-than", "10000");
      await direct.config("SET", "slowlog-max-len", "128");
      return { totalMs, scripts: log.filter(isScript) };
    };
    const measure = async (operation: string, run: (queue: Queue) => Promise<unknown>, name: string) => {
      const calls: number[] = [];
      const scriptUs: number[] = [];
      const queue = new Queue(name, { redis: timedPort(port, direct, calls, scriptUs), prefix });
      await direct.config("SET", "slowlog-log-slower-than", "0");
      await direct.slowlog("RESET");
      const start = performance.now();
      try {
        await run(queue);
      } finally {
        await direct.config("SET", "slowlog-log-slower-than", "10000");
      }
      const totalMs = performance.now() - start;
      if (scriptUs.length !== calls.length) throw new Error(`${operation}: a call missing from SLOWLOG`);
      rows.push({
        operation,
        jobs,
        calls: calls.length,
        longestScriptMs: Math.max(0, ...scriptUs) / 1000,
        medianScriptMs: median(scriptUs) / 1000,
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
    const range = 100_000;

    console.error(`filling queues with ${jobs} jobs each…`);
    await fill("clean-completed", () => undefined);
    await finish("clean-completed", "completed");
    await measure("getJobCounts()", (q) => q.getJobCounts(), "clean-completed");
    await measure(
      `getJobs('completed', 0, ${range})`,
      (q) => q.getJobs("completed", 0, range),
      "clean-completed",
    );
    await measure("clean(0, 0, 'completed')", (q) => q.clean(0, 0, "completed"), "clean-completed");

    await fill("clean-wait", () => ({ timestamp: Date.now() - 60_000 }));
    await measure(
      `getJobs('wait', 0, ${range}, asc)`,
      (q) => q.getJobs("wait", 0, range, true),
      "clean-wait",
    );
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

    if (withBull) {
      await fill("bull-drain", mixed);
      await measureBull("BullMQ drain(true)", (q) => q.drain(true), "bull-drain");
      await fill("bull-clean", () => undefined);
      await finish("bull-clean", "failed");
      await measureBull("BullMQ clean(0, 0, 'failed')", (q) => q.clean(0, 0, "failed"), "bull-clean");
    }
  } finally {
    direct.disconnect();
    await rest.close();
    await server.stop();
  }
  console.log(
    `| operation (${jobs} jobs) | script calls | slowest script in Redis (ms) | median script (ms) | longest call via REST (ms) | total (ms) | ≤ ${boundMs} ms |`,
  );
  console.log("|---|---:|---:|---:|---:|---:|:-:|");
  for (const row of rows) {
    const call = Number.isNaN(row.longestCallMs) ? "–" : row.longestCallMs.toFixed(1);
    console.log(
      `| ${row.operation} | ${row.calls} | ${row.longestScriptMs.toFixed(1)} | ${row.medianScriptMs.toFixed(1)} | ${call} | ${row.totalMs.toFixed(0)} | ${row.longestScriptMs <= boundMs ? "yes" : "NO"} |`,
    );
  }
}

await main();
