/**
 * Section 7: does a call's cost depend on how much waits? One lease and one ack of 50 jobs with
 * 1,000 / 100,000 / 1,000,000 jobs waiting, and one sweep with 100,000 delayed jobs of which 1,000
 * are due (next to a smaller delayed set). Queues are filled directly over TCP by a Lua loader
 * (minimal job hashes: name, data, opts, timestamp, delay, priority). Each call is timed end to end
 * through the local REST server and, on the Redis side, by the EVALSHA time in `INFO commandstats`.
 */
import type { Redis as IORedis } from "ioredis";
import { type RedisPort, toRedisPort } from "../../core/index.ts";
import { ackAndLease, ackPromoteAndLease, sweepQueues } from "../../core/redis/generated/scripts.ts";
import { releaseSweeperLock, sweep } from "../../core/sweeper/sweep.ts";
import { decide } from "../../core/worker/outcome.ts";
import { ackBatch, leaseBatch } from "../support/worker-calls.ts";
import { type BenchEnv, commandCounts, flush, median, round } from "./common.ts";

export interface LeaseAckRow {
  waiting: number;
  fillMs: number;
  reps: number;
  leaseMs: number;
  ackMs: number;
  leaseRedisUs: number;
  ackRedisUs: number;
}

export interface SweepRow {
  delayed: number;
  due: number;
  reps: number;
  sweepMs: number;
  sweepRedisUs: number;
  promoted: number;
}

export interface ScaleResult {
  batch: number;
  leaseAck: LeaseAckRow[];
  sweeps: SweepRow[];
}

const fillScript = `
local prefix, first, count, now, due = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local ids, scored = {}, {}
for i = first, first + count - 1 do
  local id = tostring(i)
  if due >= 0 then
    local at = due + (i - first)
    redis.call("HSET", prefix .. id, "name", "fill", "data", "{}", "opts", "{}", "timestamp", now, "delay", at - now, "priority", "0")
    scored[#scored + 1] = at * 4096
    scored[#scored + 1] = id
    if #scored >= 4000 then redis.call("ZADD", prefix .. "delayed", unpack(scored)); scored = {} end
  else
    redis.call("HSET", prefix .. id, "name", "fill", "data", "{}", "opts", "{}", "timestamp", now, "delay", "0", "priority", "0")
    ids[#ids + 1] = id
    if #ids >= 4000 then redis.call("LPUSH", prefix .. "wait", unpack(ids)); ids = {} end
  end
end
if #ids > 0 then redis.call("LPUSH", prefix .. "wait", unpack(ids)) end
if #scored > 0 then redis.call("ZADD", prefix .. "delayed", unpack(scored)) end
redis.call("SET", prefix .. "id", first + count - 1)
if #ids > 0 or due < 0 then redis.call("ZADD", prefix .. "marker", 0, "0") end
return count`;

/** Adds `count` jobs from id `first`: waiting, or delayed from `due` (ms, one ms apart) when given. */
async function fill(
  direct: IORedis,
  queue: string,
  first: number,
  count: number,
  due?: number,
): Promise<void> {
  const now = Date.now();
  for (let start = first; start < first + count; start += 50_000) {
    const length = Math.min(50_000, first + count - start);
    await direct.eval(fillScript, 0, `bull:${queue}:`, start, length, now, due ?? -1);
  }
}

interface Call {
  name: string;
  ms: number;
  redisUs: number;
}

/** A port that times each script call, end to end and on the Redis side. */
function timingPort(inner: RedisPort, direct: IORedis, onCall: (call: Call) => void): RedisPort {
  const names = new Map([ackPromoteAndLease, ackAndLease, sweepQueues].map((s) => [s.sha1, s.name]));
  const scriptUs = async () => {
    const counts = await commandCounts(direct);
    return (counts.get("evalsha")?.usec ?? 0) + (counts.get("eval")?.usec ?? 0);
  };
  const timed = async <T>(name: string, call: () => Promise<T>): Promise<T> => {
    const before = await scriptUs();
    const started = performance.now();
    try {
      return await call();
    } finally {
      const ms = performance.now() - started;
      onCall({ name, ms, redisUs: (await scriptUs()) - before });
    }
  };
  const port = {
    [Symbol.for("nimbusq.redisPort")]: true,
    evalsha: (sha1: string, keys: string[], args: string[]) =>
      timed(names.get(sha1) ?? sha1, () => inner.evalsha(sha1, keys, args)),
    eval: (source: string, keys: string[], args: string[]) =>
      timed("eval", () => inner.eval(source, keys, args)),
    hgetall: (key: string) => inner.hgetall(key),
  };
  return port;
}

/** One lease (a worker's first call) and one ack of `batch` completions (its declared-keys call), `reps` times. */
async function leaseAndAck(env: BenchEnv, queue: string, batch: number, reps: number) {
  const leases: Call[] = [];
  const acks: Call[] = [];
  const port = timingPort(toRedisPort(env.fastRedis), env.direct, (call) => {
    if (call.name === "ackPromoteAndLease") leases.push(call);
    if (call.name === "ackAndLease") acks.push(call);
  });
  const context = { port, prefix: "bull", queueName: queue, clock: Date.now };
  for (let rep = 0; rep < reps; rep++) {
    const token = `scale:${rep}:${Date.now()}`;
    const lease = await leaseBatch(context, {
      token,
      count: batch,
      leaseMs: 30_000,
      limiterMax: 0,
      limiterDuration: 0,
      workerName: "",
    });
    const entries = lease.jobs.map(
      (job) => decide(job, { kind: "returned", value: null }, { now: Date.now() }).entry,
    );
    const ack = await ackBatch(
      context,
      entries.filter((e) => e !== undefined),
      `${token}:ack`,
    );
    if (ack.codes.filter((code) => code === 1).length !== batch)
      throw new Error(`scale: a batch acked ${ack.codes.length} of ${batch} jobs`);
  }
  return { leases, acks };
}

export async function runScale(env: BenchEnv): Promise<ScaleResult> {
  const quick = env.quick;
  const batch = 50;
  const reps = quick ? 2 : 5;
  const sizes = quick ? [1000, 10_000] : [1000, 100_000, 1_000_000];
  const leaseAck: LeaseAckRow[] = [];
  // Scripts loaded once, outside every measurement.
  await fill(env.direct, "scale-warm", 1, batch);
  await leaseAndAck(env, "scale-warm", batch, 1);
  for (const waiting of sizes) {
    await flush(env);
    const started = performance.now();
    await fill(env.direct, "scale", 1, waiting);
    const fillMs = performance.now() - started;
    const { leases, acks } = await leaseAndAck(env, "scale", batch, reps);
    leaseAck.push({
      waiting,
      fillMs: Math.round(fillMs),
      reps,
      leaseMs: round(median(leases.map((c) => c.ms)), 2),
      ackMs: round(median(acks.map((c) => c.ms)), 2),
      leaseRedisUs: Math.round(median(leases.map((c) => c.redisUs))),
      ackRedisUs: Math.round(median(acks.map((c) => c.redisUs))),
    });
    env.log(
      `scale: ${waiting} waiting: lease ${leaseAck.at(-1)?.leaseMs} ms, ack ${leaseAck.at(-1)?.ackMs} ms (filled in ${Math.round(fillMs)} ms)`,
    );
  }
  await flush(env);

  const due = quick ? 200 : 1000;
  const totals = quick ? [2000, 5000] : [10_000, 100_000];
  const sweeps: SweepRow[] = [];
  for (const delayed of totals) {
    await flush(env);
    const now = Date.now();
    // The not-yet-due part, an hour ahead, then `due` jobs already due before each sweep.
    await fill(env.direct, "sweep", 1, delayed - due, now + 3_600_000);
    let next = delayed - due + 1;
    const calls: Call[] = [];
    const promoted: number[] = [];
    const port = timingPort(toRedisPort(env.fastRedis), env.direct, (call) => {
      if (call.name === "sweepQueues") calls.push(call);
    });
    for (let rep = 0; rep < reps; rep++) {
      await fill(env.direct, "sweep", next, due, Date.now() - 60_000);
      next += due;
      const token = `bench-${rep}`;
      const result = await sweep({
        port,
        prefix: "bull",
        queues: ["sweep"],
        token,
        lockTtlMs: 10_000,
        now: Date.now(),
        stalledInterval: 30_000,
        maxStalledCount: 1,
        promoteLimit: 1000,
        eventBatch: 0,
        recheckMs: 60_000,
      });
      if (result.locked) throw new Error("scale: the sweeper lock was held");
      promoted.push(result.queues[0]?.promoted ?? 0);
      await releaseSweeperLock(toRedisPort(env.fastRedis), "bull", token);
    }
    sweeps.push({
      delayed,
      due,
      reps,
      sweepMs: round(median(calls.map((c) => c.ms)), 2),
      sweepRedisUs: Math.round(median(calls.map((c) => c.redisUs))),
      promoted: median(promoted),
    });
    env.log(`scale: sweep of ${delayed} delayed (${due} due): ${sweeps.at(-1)?.sweepMs} ms`);
  }
  await flush(env);
  return { batch, leaseAck, sweeps };
}
