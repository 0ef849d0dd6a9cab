/**
 * Shared pieces of the all-or-nothing add tests: a port around the real one (the real @upstash/redis
 * client through the REST server to the real redis-server) that injects transport failures into the
 * Nth call of a script — the request lost before it ran, or run and its answer lost — or delivers a
 * call twice as a retrying client would, and runs a hook before a call; plus a digest of a prefix's
 * keyspace and a look at every key left there.
 */
import { createHash } from "node:crypto";
import type { Redis as IORedis } from "ioredis";
import { type RedisPort, toRedisPort } from "../../core/index.ts";
import * as generated from "../../core/redis/generated/scripts.ts";
import { keysUnder, sharedRedis } from "./stack.ts";

const scripts = Object.values(generated).filter(
  (value): value is { name: string; sha1: string; source: string } & typeof value => "sha1" in value,
);
const bySha = new Map(scripts.map((script) => [script.sha1, script]));

/** What happens to one call: lost before it ran, run with its answer lost, delivered twice, or a hook first. */
export type Fault = "fail-before" | "fail-after" | "twice" | (() => Promise<void>);

/** Decides the fault (if any) for the `n`-th call (from 1) of the script named `script`. */
export type FaultRule = (script: string, n: number) => Fault | undefined;

export class InjectedFailure extends Error {
  override name = "InjectedFailure";
}

export interface FaultPort extends RedisPort {
  /** Script names in call order. */
  readonly calls: string[];
}

/** The real port, with `rule` deciding each call's fault. NOSCRIPT is resolved here (EVAL), uncounted. */
export function faultPort(rule: FaultRule, inner: RedisPort = toRedisPort(sharedRedis())): FaultPort {
  const counts = new Map<string, number>();
  const calls: string[] = [];
  const deliver = async (sha: string, keys: string[], args: string[]) => {
    try {
      return await inner.evalsha(sha, keys, args);
    } catch (error) {
      const script = bySha.get(sha);
      if (!script || !/noscript/i.test(String(error))) throw error;
      return await inner.eval(script.source, keys, args);
    }
  };
  return {
    [Symbol.for("nimbusq.redisPort")]: true,
    calls,
    evalsha: async (sha: string, keys: string[], args: string[]) => {
      const name = bySha.get(sha)?.name ?? sha;
      const n = (counts.get(name) ?? 0) + 1;
      counts.set(name, n);
      calls.push(name);
      const fault = rule(name, n);
      if (typeof fault === "function") await fault();
      if (fault === "fail-before") throw new InjectedFailure(`${name} #${n}: the request was lost`);
      const reply = await deliver(sha, keys, args);
      if (fault === "fail-after") throw new InjectedFailure(`${name} #${n}: the answer was lost`);
      if (fault === "twice") return await deliver(sha, keys, args);
      return reply;
    },
    eval: (source: string, keys: string[], args: string[]) => inner.eval(source, keys, args),
    hgetall: (key: string) => inner.hgetall(key),
  } as FaultPort;
}

/**
 * A digest of every key under the prefix (name and DUMP, as test/support/keyspace.ts) except the id
 * counters — a staged add refused in a later chunk has taken counter values, a gap as after removals —
 * and the keys `ignore` names.
 */
export async function digestWithoutCounters(
  direct: IORedis,
  prefix: string,
  ignore: (key: string, type: string) => boolean = () => false,
): Promise<string> {
  const hash = createHash("sha256");
  for (const key of await keysUnder(direct, prefix)) {
    if (key.endsWith(":id") || ignore(key, await direct.type(key))) continue;
    const dump = (await direct.dumpBuffer(key)) ?? Buffer.alloc(0);
    hash.update(`${key.length}:${key}${dump.length}:`).update(dump);
  }
  return hash.digest("hex");
}

/** Every key under the prefix with its TTL (ms; -1 none). */
export async function keysWithTtl(direct: IORedis, prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const key of await keysUnder(direct, prefix)) out.set(key, await direct.pttl(key));
  return out;
}

/** Jobs of 1 KB each: `n` of them named `job`, data `{ i, pad }`. */
export function kilobyteJobs(n: number, opts?: (i: number) => Record<string, unknown> | undefined) {
  const pad = "x".repeat(1000);
  return Array.from({ length: n }, (_, i) => ({ name: "job", data: { i, pad }, opts: opts?.(i) }));
}
