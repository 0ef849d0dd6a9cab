/**
 * How long does each script call of the bounded maintenance operations and the large reads hold Redis?
 * clean, retryJobs, promoteJobs, drain, obliterate, getJobCounts and getJobs over a range of 100,000
 * each run on a queue of `jobs` jobs on a private redis-server (and one clean deletes `jobs / 10` old
 * jobs lying behind `jobs` young ones in wait, far from the end it reads from). While an operation runs
 * `slowlog-log-slower-than` is 0, and after every script call the client reads that call's EVALSHA
 * entry from SLOWLOG (the time Redis spent in the script) and resets the log, so no call is missed.
 * The bound to keep: no script over 20 ms.
 *
 * On a shared 2-core VM the slowest of thousands of steps says as much about the machine as about the
 * script. So the redis-server gets a core of its own at real-time priority, as on a server that runs
 * nothing but Redis (unless `--shared`, or the machine does not allow it: the report says which), and
 * two witnesses run alongside. Around every call the bench reads the redis-server main
 * thread's /proc counters (time on a CPU, time waiting for one, preemptions, page faults, machine-wide
 * steal), so each call over the bound shows whether it worked or waited. And after every step a control
 * script does the same amount of CPU work (the step's, in rounds of the same kinds of commands) on three
 * small keys, in the same conditions: a tail the control shares comes from how long a call runs on this
 * machine, not from the structures the step walks. Reported per operation: median, p99, p99.9, max and
 * calls over 20 ms of the steps and of their controls, the steps' CPU time, and the slow calls. With
 * `--bullmq`, BullMQ 6.7.0's drain and clean on the same data are measured alongside (from SLOWLOG at
 * a 0.5 ms threshold). Besides the bounded operations: removing single waiting jobs (one LREM from the
 * end of wait nearer the job's time), a clean whose old jobs lie in the middle of the list (the
 * farthest from both ends a list's LREM has to walk), and a resume that moves a legacy paused list as
 * long as the queue.
 *
 *   npx tsx test/bench/maintenance-scale.ts [jobs] [--bullmq] [--shared] [--json FILE]   (default
 *   100000; not part of `npm test`)
 */
import { writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { Queue as BullQueue } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { createRedis, type JobsOptions, Queue, type RedisPort, toRedisPort } from "../../core/index.ts";
import { startRedisServer } from "../../infra/redis-server.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { counterDelta, isolateRedis, median, redisPid, threadCounters } from "./common.ts";
import {
  type CallSample,
  type LatencyEvent,
  printReport,
  type Row,
  serverSettings,
} from "./maintenance-report.ts";

const jobs = Number(process.argv[2]?.startsWith("--") ? 100_000 : (process.argv[2] ?? 100_000));
const withBull = process.argv.includes("--bullmq");
const shared = process.argv.includes("--shared");
/** `--json FILE`: also write every sampled call there, for a closer look. */
const jsonPath = process.argv.includes("--json")
  ? process.argv[process.argv.indexOf("--json") + 1]
  : undefined;

type SlowlogEntry = [number, number, number, string[]];

function isScript(entry: SlowlogEntry): boolean {
  return /^(evalsha|eval)$/i.test(String(entry[3][0]));
}

/**
 * The control: rounds of the kinds of work a step does (reads of a small hash and a sorted set, a small
 * hash written and deleted) on three small keys, so its cost never depends on how much data the server
 * holds.
 */
const controlScript = `
for i = 1, tonumber(ARGV[1]) do
  redis.call("HMGET", KEYS[1], "rjk", "parentKey", "parent", "deid", "finishedOn", "processedOn", "timestamp")
  redis.call("ZSCORE", KEYS[2], "m")
  redis.call("HSET", KEYS[3], "name", "job", "data", ARGV[2])
  redis.call("DEL", KEYS[3])
end
return 1`;
const controlKeys = ["scale:control:hash", "scale:control:zset", "scale:control:scratch"];

/**
 * The work a call did (µs): its script time, or less when the redis-server thread was on a CPU for less
 * than that over the whole call (the rest it was preempted).
 */
function workUs(sample: CallSample): number {
  return Math.min(sample.scriptUs, sample.counters ? sample.counters.cpuNs / 1000 : sample.scriptUs);
}

/**
 * Runs one script call and answers its reply and what it cost: its SLOWLOG time (Redis logs the
 * EVALSHA after the commands it ran, so it is the newest script entry), the client's time, and the
 * redis-server main thread's counters over the call.
 */
async function sampleCall<T>(
  run: () => Promise<T>,
  direct: IORedis,
  pid: number,
): Promise<{ reply: T; sample: CallSample }> {
  const before = threadCounters(pid);
  const start = performance.now();
  // A failed call (NOSCRIPT before the client's EVAL) is not counted, but its SLOWLOG entry goes too.
  const outcome = await run().then(
    (reply) => ({ reply }),
    (error: unknown) => ({ error }),
  );
  const callMs = performance.now() - start;
  const after = threadCounters(pid);
  const log = (await direct.call("SLOWLOG", "GET", "16")) as SlowlogEntry[];
  await direct.slowlog("RESET");
  if ("error" in outcome) throw outcome.error;
  const entry = log.find(isScript);
  if (!entry) throw new Error("a script call missing from SLOWLOG");
  return {
    reply: outcome.reply,
    sample: { scriptUs: entry[2], callMs, counters: counterDelta(before, after) },
  };
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  // A run stopped half-way (Ctrl-C, kill) leaves no redis-server behind.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void server.stop().finally(() => process.exit(1)));
  }
  // No billing meter and none of the test-time checks (declared keys, Redis 6.2 forms), whose Lua
  // prelude would be timed inside every script: Upstash runs the script as it is.
  const rest = await startRestServer({
    redis: { host: server.host, port: server.port },
    token: "bench",
    countScriptCalls: false,
    declaredKeys: false,
    upstashMode: false,
  });
  const direct = new IORedis({ host: server.host, port: server.port, maxRetriesPerRequest: null });
  const port = toRedisPort(createRedis({ url: rest.url, token: rest.token }));
  const pid = await redisPid(direct);
  const prefix = "scale";
  const rows: Row[] = [];
  try {
    await direct.config("SET", "slowlog-max-len", "128");
    // Redis's own latency monitor, reset around each operation: events of 10 ms or more, scripts or
    // not (a "fast-command" taking that long is the machine's doing).
    await direct.config("SET", "latency-monitor-threshold", "10");
    const isolation = shared ? "not isolated (--shared)" : isolateRedis(pid);
    console.log(`redis-server pid ${pid}, ${isolation}; ${await serverSettings(direct)}`);

    await direct.hset(controlKeys[0] as string, "rjk", "", "timestamp", "1", "processedOn", "1");
    await direct.zadd(controlKeys[1] as string, 1, "m");
    const controlSha = String(await direct.script("LOAD", controlScript));
    const payload = JSON.stringify({ pad: "x".repeat(64) });
    // What one round costs: first 15 calls of 1000 rounds on the empty server, then the latest controls,
    // since a round's CPU time moves with what else the machine runs (caches, frequency).
    await direct.config("SET", "slowlog-log-slower-than", "0");
    const perRound: number[] = [];
    const usPerRound = () => median(perRound.slice(-101));
    const runControl = async (rounds: number) => {
      const call = () => port.evalsha(controlSha, controlKeys, [String(rounds), payload]);
      const { sample } = await sampleCall(call, direct, pid);
      if (rounds >= 50) perRound.push(workUs(sample) / rounds);
      return sample;
    };
    for (let i = 0; i < 15; i++) await runControl(1000);
    await direct.config("SET", "slowlog-log-slower-than", "10000");
    console.error(`control: ${usPerRound().toFixed(2)} µs per round`);
    /** The control after a step does as much work as the step did. */
    const control = (step: CallSample) => runControl(Math.max(1, Math.round(workUs(step) / usPerRound())));

    const fill = async (name: string, opts: (i: number) => JobsOptions | undefined, count = jobs) => {
      const queue = new Queue(name, { redis: port, prefix });
      for (let from = 0; from < count; from += 1000) {
        const batch = Array.from({ length: Math.min(1000, count - from) }, (_, k) => ({
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
    /**
     * Runs one operation through a port that samples each of its script calls and, after each, its
     * control call.
     */
    const measure = async (operation: string, run: (queue: Queue) => Promise<unknown>, name: string) => {
      const row: Row = { operation, jobs, steps: [], control: [], totalMs: 0, latency: [], load: 0 };
      const timed = async (call: () => Promise<unknown>) => {
        const { reply, sample } = await sampleCall(call, direct, pid);
        row.steps.push(sample);
        row.control.push(await control(sample));
        return reply;
      };
      const timedPort = {
        [Symbol.for("nimbusq.redisPort")]: true,
        evalsha: (sha: string, keys: string[], args: string[]) => timed(() => port.evalsha(sha, keys, args)),
        eval: (source: string, keys: string[], args: string[]) => timed(() => port.eval(source, keys, args)),
        hgetall: (key: string) => port.hgetall(key),
      } as RedisPort;
      const queue = new Queue(name, { redis: timedPort, prefix });
      await direct.config("SET", "slowlog-log-slower-than", "0");
      await direct.slowlog("RESET");
      await direct.call("LATENCY", "RESET");
      const start = performance.now();
      try {
        await run(queue);
      } finally {
        await direct.config("SET", "slowlog-log-slower-than", "10000");
      }
      row.latency = (await direct.call("LATENCY", "LATEST")) as LatencyEvent[];
      row.load = loadavg()[0] ?? Number.NaN;
      // The controls ran inside the operation's time; take them out.
      row.totalMs = performance.now() - start - row.control.reduce((sum, sample) => sum + sample.callMs, 0);
      rows.push(row);
      console.error(`  ${operation}: done`);
    };
    /** Runs one BullMQ operation and reads the script runs SLOWLOG saw at 0.5 ms or more. */
    const measureBull = async (
      operation: string,
      run: (queue: BullQueue) => Promise<unknown>,
      name: string,
    ) => {
      const queue = new BullQueue(name, { connection: { host: server.host, port: server.port }, prefix });
      await queue.waitUntilReady();
      await direct.config("SET", "slowlog-max-len", "100000");
      await direct.config("SET", "slowlog-log-slower-than", "500");
      await direct.slowlog("RESET");
      const start = performance.now();
      await run(queue);
      const totalMs = performance.now() - start;
      const log = (await direct.call("SLOWLOG", "GET", "-1")) as SlowlogEntry[];
      await direct.config("SET", "slowlog-log-slower-than", "10000");
      await direct.config("SET", "slowlog-max-len", "128");
      // Calls under the slowlog threshold are not seen here; BullMQ's are far above it.
      const steps = log
        .filter(isScript)
        .map(([, , us]) => ({ scriptUs: us, callMs: Number.NaN, counters: null }));
      rows.push({ operation, jobs, steps, control: [], totalMs, latency: [], load: loadavg()[0] ?? 0 });
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

    // Old jobs in the middle of wait, half of the young ones on either side (as retryJobs and
    // promoteJobs leave them, pushing old jobs on the left while adds go on): a list's LREM walks from
    // the nearer end, here to the middle of the list, so these steps delete fewer jobs each.
    const deep = Math.ceil(jobs / 10);
    const young = Math.ceil((jobs - deep) / 2);
    await fill("clean-deep", () => undefined, young);
    await fill("clean-deep", () => ({ timestamp: Date.now() - 2 * 3_600_000 }), deep);
    await fill("clean-deep", () => undefined, young);
    await measure(
      `clean(1 h, 0, 'wait'), ${deep} old jobs in the middle of ${2 * young + deep}`,
      (q) => q.clean(3_600_000, 0, "wait"),
      "clean-deep",
    );
    // Single waiting jobs removed (one LREM from the end nearer the job's time; BullMQ's reads the
    // whole list), from the next in line to the newest (the ids count from the right end; the old ones
    // in the middle are gone).
    const ids = [1, Math.ceil(young / 2), young, young + deep + Math.ceil(young / 2), 2 * young + deep];
    await measure(
      `remove(id) of ${ids.length} waiting jobs`,
      async (q) => {
        for (const id of ids) await q.remove(String(id));
      },
      "clean-deep",
    );

    // A 5.x paused list as long as the queue, next to a wait that is not empty: resume moves it.
    const legacy = `${prefix}:legacy:`;
    for (let from = 0; from < jobs; from += 10_000) {
      const ids = Array.from({ length: Math.min(10_000, jobs - from) }, (_, k) => String(from + k + 1));
      await direct.lpush(`${legacy}paused`, ...ids);
    }
    await direct.lpush(`${legacy}wait`, "w1", "w2");
    await direct.hset(`${legacy}meta`, "paused", "1");
    await measure(`resume(), ${jobs} jobs in a legacy paused list`, (q) => q.resume(), "legacy");

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
    printReport(rows, usPerRound());
    if (jsonPath) await writeFile(jsonPath, JSON.stringify(rows));
  } finally {
    direct.disconnect();
    await rest.close();
    await server.stop();
  }
}

await main();
