/**
 * The narrow port through which core/ talks to Redis: script calls and one plain read. Everything
 * that changes state goes through a Lua script; the port is what an edge runtime, Lambda or Node all
 * provide through `@upstash/redis`.
 */

import { type RedisRetryOptions, withRetries } from "./retry.ts";
import { scriptNameOf } from "./script-names.ts";

/** Upstash's request limit on free and pay-as-you-go ("10 MB"), taken as 10,000,000 bytes. */
export const requestLimitBytes = 10_000_000;

export interface RedisPort {
  /** EVALSHA; rejects with an error whose message contains NOSCRIPT when the script is not cached. */
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  /** EVAL with the full source (after NOSCRIPT). */
  eval(source: string, keys: string[], args: string[]): Promise<unknown>;
  /** HGETALL as a flat `[field, value, …]` array (empty when the key does not exist). */
  hgetall(key: string): Promise<string[]>;
  /**
   * XRANGE with COUNT, as raw `[id, [field, value, …]]` entries (`start` may be exclusive, `(<id>`).
   * Optional: only QueueEvents reads the events stream.
   */
  xrange?(key: string, start: string, end: string, count: number): Promise<StreamEntry[]>;
  /** XREVRANGE with COUNT, newest first. Optional, as xrange. */
  xrevrange?(key: string, end: string, start: string, count: number): Promise<StreamEntry[]>;
  /**
   * ZRANGE key 0 -1 WITHSCORES as a flat `[member, score, …]` list (one billed command). Optional:
   * the sweeper reads its attention index with it (without it, with a script: two).
   */
  zrangeWithScores?(key: string): Promise<string[]>;
}

/** One stream entry as Redis answers it: its id and its flat field/value list. */
export type StreamEntry = [id: string, fields: string[]];

/**
 * The part of an `@upstash/redis` `Redis` client that nimbusq uses. Any entry point of the package
 * (`@upstash/redis`, `/cloudflare`, `/fastly`) fits. The client must be built with
 * `automaticDeserialization: false` (see `createRedis`): with it on, the client turns stored strings
 * like `"123"` or `"null"` into other values.
 */
export interface UpstashRedisLike {
  evalsha<TArgs extends unknown[], TData = unknown>(
    sha1: string,
    keys: string[],
    args: TArgs,
  ): Promise<TData>;
  eval<TArgs extends unknown[], TData = unknown>(script: string, keys: string[], args: TArgs): Promise<TData>;
  hgetall(key: string): Promise<unknown>;
  xrange?(key: string, start: string, end: string, count?: number): Promise<unknown>;
  xrevrange?(key: string, end: string, start: string, count?: number): Promise<unknown>;
  zrange?(key: string, min: number, max: number, options?: { withScores?: boolean }): Promise<unknown>;
}

/** Whether `value` has the methods nimbusq calls on a client (or is a port). */
export function isClient(value: unknown): value is UpstashRedisLike | RedisPort {
  if (typeof value !== "object" || value === null) return false;
  const client = value as Record<string, unknown>;
  return ["evalsha", "eval", "hgetall"].every((method) => typeof client[method] === "function");
}

/** The host a client talks to, for error messages (an `@upstash/redis` client keeps its base URL). */
function hostOf(redis: UpstashRedisLike): string | undefined {
  const baseUrl = (redis as { client?: { baseUrl?: unknown } }).client?.baseUrl;
  if (typeof baseUrl !== "string") return undefined;
  try {
    return new URL(baseUrl).host;
  } catch {
    return undefined;
  }
}

function isPort(value: UpstashRedisLike | RedisPort): value is RedisPort {
  return (value as { [portBrand]?: true })[portBrand] === true;
}

const portBrand = Symbol.for("nimbusq.redisPort");

/**
 * Wraps an `@upstash/redis` client (or returns a port as is): every call retries transient failures
 * within `retry`'s window (core/redis/retry.ts), and fails with a RedisCallError that never quotes
 * the request.
 */
export function toRedisPort(redis: UpstashRedisLike | RedisPort, retry: RedisRetryOptions = {}): RedisPort {
  if (isPort(redis)) return redis;
  const host = hostOf(redis);
  const call = <T>(command: string, run: () => Promise<T>) =>
    withRetries(run, host ? { command, host } : { command }, retry);
  const port: RedisPort & { [portBrand]: true } = {
    [portBrand]: true,
    evalsha: (sha1, keys, args) => {
      const name = scriptNameOf(sha1);
      return call(name ? `script ${name} (EVALSHA)` : "EVALSHA", () => redis.evalsha(sha1, keys, args));
    },
    eval: (source, keys, args) => call("EVAL", () => redis.eval(source, keys, args)),
    hgetall: async (key) => {
      const reply = await call("HGETALL", () => redis.hgetall(key));
      if (reply === null || reply === undefined) return [];
      if (!Array.isArray(reply)) {
        throw new TypeError(
          "the Redis client decoded HGETALL into an object: build it with automaticDeserialization: false (createRedis does)",
        );
      }
      return reply.map(String);
    },
  };
  const { xrange, xrevrange, zrange } = redis;
  if (zrange)
    port.zrangeWithScores = async (key) => {
      const reply = await call("ZRANGE", () => zrange.call(redis, key, 0, -1, { withScores: true }));
      if (!Array.isArray(reply)) return [];
      return reply.map(String);
    };
  if (xrange)
    port.xrange = async (key, start, end, count) =>
      streamEntries(await call("XRANGE", () => xrange.call(redis, key, start, end, count)));
  if (xrevrange)
    port.xrevrange = async (key, end, start, count) =>
      streamEntries(await call("XREVRANGE", () => xrevrange.call(redis, key, end, start, count)));
  return port;
}

function streamEntries(reply: unknown): StreamEntry[] {
  if (reply === null || reply === undefined) return [];
  if (!Array.isArray(reply)) {
    throw new TypeError(
      "the Redis client decoded a stream read into an object: build it with automaticDeserialization: false (createRedis does)",
    );
  }
  return reply.map((entry) => {
    const [id, fields] = entry as [unknown, unknown];
    return [String(id), Array.isArray(fields) ? fields.map(String) : []];
  });
}
