/**
 * What every benchmark section shares: one redis-server started for the run, two local REST servers in
 * front of it (one metering billed commands, one not, for timings), a direct TCP connection for
 * `INFO commandstats` and bulk loading, BullMQ's connection options, and small statistics helpers.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Redis } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { createRedis } from "../../core/index.ts";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";

export interface BenchEnv {
  quick: boolean;
  server: RedisServer;
  /** Direct TCP connection: INFO, FLUSHALL and bulk loading only. */
  direct: IORedis;
  /** Counts billed commands exactly (EVAL + every redis.call); serialises script requests to do so. */
  metered: RestServer;
  /** No script metering: what timings go through, as Upstash adds no such step. */
  fast: RestServer;
  meteredRedis: Redis;
  fastRedis: Redis;
  /** BullMQ's connection options for the same redis-server. */
  connection: { host: string; port: number; maxRetriesPerRequest: null };
  log(line: string): void;
}

export async function startBenchEnv(quick: boolean, log: (line: string) => void): Promise<BenchEnv> {
  const server = await startRedisServer();
  const target = { host: server.host, port: server.port };
  const metered = await startRestServer({ redis: target, token: "bench-metered" });
  // Timed runs: no billing meter and none of the test-time checks that stand in for Upstash's rules
  // (declared keys, Redis 6.2 forms), whose Lua wrappers would be timed too; the metered server keeps them.
  const fast = await startRestServer({
    redis: target,
    token: "bench-fast",
    countScriptCalls: false,
    declaredKeys: false,
    upstashMode: false,
  });
  return {
    quick,
    server,
    direct: new IORedis({ ...target, maxRetriesPerRequest: null }),
    metered,
    fast,
    meteredRedis: createRedis({ url: metered.url, token: metered.token }),
    fastRedis: createRedis({ url: fast.url, token: fast.token }),
    connection: { ...target, maxRetriesPerRequest: null },
    log,
  };
}

export async function stopBenchEnv(env: BenchEnv): Promise<void> {
  env.direct.disconnect();
  await env.metered.close();
  await env.fast.close();
  await env.server.stop();
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Commands Redis ran (top level and inside scripts), by family, from `INFO commandstats`. */
export async function commandCounts(direct: IORedis): Promise<Map<string, { calls: number; usec: number }>> {
  const info = await direct.info("commandstats");
  const counts = new Map<string, { calls: number; usec: number }>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    counts.set(match[1] as string, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return counts;
}

/** Every command Redis ran except INFO (what the measurement itself sends). */
export async function billedTotal(direct: IORedis): Promise<number> {
  let total = 0;
  for (const [name, { calls }] of await commandCounts(direct)) if (name !== "info") total += calls;
  return total;
}

/** Waits until `done()` holds, polling every `everyMs`; false when `timeoutMs` passed first. */
export async function waitUntil(done: () => boolean, timeoutMs: number, everyMs = 2): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
  return true;
}

/** The value at quantile q (0..1) of the samples, by the nearest-rank method. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

export const median = (samples: readonly number[]) => quantile(samples, 0.5);

/** Rounds for JSON and tables: 3 significant decimals at most. */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Splits `count` items into chunks of `size`: [start, length] pairs. */
export function chunks(count: number, size: number): [number, number][] {
  const out: [number, number][] = [];
  for (let start = 0; start < count; start += size) out.push([start, Math.min(size, count - start)]);
  return out;
}

/** Removes every key (between runs, so each run starts from an empty keyspace). */
export async function flush(env: BenchEnv): Promise<void> {
  await env.direct.flushall();
}

let counter = 0;
/** A queue name or prefix no earlier run used. */
export function unique(label: string): string {
  counter += 1;
  return `${label}-${Date.now().toString(36)}-${counter}`;
}

/**
 * Where one thread's time went, from Linux's /proc: what tells a script that worked for its whole
 * duration from one that sat off the CPU (preempted, or its vCPU stolen by the host) or in page faults.
 */
export interface ThreadCounters {
  /** Time on a CPU (ns; stolen time excluded, as the kernel accounts paravirtual steal). */
  cpuNs: number;
  /** Time runnable but waiting for a CPU (ns). */
  waitNs: number;
  /** Times the scheduler took the CPU away while the thread could still run. */
  involuntarySwitches: number;
  minorFaults: number;
  majorFaults: number;
  /** Machine-wide time the hypervisor gave the vCPUs to others (clock ticks, all CPUs). */
  stealTicks: number;
}

/**
 * The counters of thread `tid` of process `pid` (the main thread when `tid` is left out); null where
 * /proc does not have them (not Linux, or the process is gone).
 */
export function threadCounters(pid: number, tid = pid): ThreadCounters | null {
  try {
    const dir = `/proc/${pid}/task/${tid}`;
    const [cpuNs, waitNs] = readFileSync(`${dir}/schedstat`, "utf8").trim().split(/\s+/).map(Number);
    const status = readFileSync(`${dir}/status`, "utf8");
    const involuntary = /^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1];
    // Fields after the parenthesised command name, from field 3 (state): minflt is 10, majflt 12.
    const stat = readFileSync(`${dir}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpuLine = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    return {
      cpuNs: cpuNs ?? Number.NaN,
      waitNs: waitNs ?? Number.NaN,
      involuntarySwitches: Number(involuntary),
      minorFaults: Number(fields[7]),
      majorFaults: Number(fields[9]),
      stealTicks: Number(cpuLine.split(/\s+/)[8]),
    };
  } catch {
    return null;
  }
}

/** `after - before`, field by field; null when either is missing. */
export function counterDelta(
  before: ThreadCounters | null,
  after: ThreadCounters | null,
): ThreadCounters | null {
  if (!before || !after) return null;
  return {
    cpuNs: after.cpuNs - before.cpuNs,
    waitNs: after.waitNs - before.waitNs,
    involuntarySwitches: after.involuntarySwitches - before.involuntarySwitches,
    minorFaults: after.minorFaults - before.minorFaults,
    majorFaults: after.majorFaults - before.majorFaults,
    stealTicks: after.stealTicks - before.stealTicks,
  };
}

/** The pid of the redis-server behind `direct` (from INFO server). */
export async function redisPid(direct: IORedis): Promise<number> {
  const info = await direct.info("server");
  return Number(/^process_id:(\d+)/m.exec(info)?.[1]);
}

/**
 * Gives a redis-server a core of its own, as on a server that runs nothing but Redis: every thread of
 * it on the last CPU at real-time (SCHED_FIFO) priority, this process on the others, so a script's
 * time in SLOWLOG is its own work and not the time it waited behind the bench, the REST server or the
 * rest of the machine (the hypervisor can still take the CPU away: steal). Needs Linux, `chrt`,
 * `taskset` and the right to raise priorities (root or CAP_SYS_NICE); answers what it did, or why not.
 */
export function isolateRedis(pid: number): string {
  const cpus = availableParallelism();
  if (cpus < 2) return "not isolated: one CPU";
  const last = cpus - 1;
  try {
    execFileSync("taskset", ["-a", "-cp", String(last), String(pid)], { stdio: "ignore" });
    execFileSync("taskset", ["-a", "-cp", `0-${last - 1}`, String(process.pid)], { stdio: "ignore" });
    execFileSync("chrt", ["-a", "-f", "-p", "50", String(pid)], { stdio: "ignore" });
    return `isolated: redis-server alone on CPU ${last} at SCHED_FIFO 50, the bench on CPU 0-${last - 1}`;
  } catch (error) {
    return `not isolated (${(error as Error).message.split("\n")[0]})`;
  }
}
