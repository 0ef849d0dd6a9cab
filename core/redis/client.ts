/**
 * Builds the `@upstash/redis` client nimbusq expects, from `UPSTASH_REDIS_REST_URL` /
 * `UPSTASH_REDIS_REST_TOKEN` or explicit values.
 */
import { Redis } from "@upstash/redis";
import { checkClockOnce } from "./clock-check.ts";
import { TcpRedis, type TcpRedisOptions } from "./tcp-redis.ts";

/** createRedis's options for Redis over TCP: a `redis://` or `rediss://` URL. */
export type TcpCreateRedisOptions = TcpRedisOptions & { url: `redis://${string}` | `rediss://${string}` };

/** Whether a URL names Redis over TCP (redis:// or rediss://) rather than the REST API. */
export function isTcpUrl(url: unknown): url is `redis://${string}` | `rediss://${string}` {
  return typeof url === "string" && /^rediss?:\/\//i.test(url);
}

export interface CreateRedisOptions {
  url?: string;
  token?: string;
  /** Per-request timeout in ms (a fresh AbortSignal per request; 0 disables). Default 10 s. */
  timeoutMs?: number;
  /**
   * Each request's timeout in ms, asked at every request (wins over `timeoutMs`): a Lambda handler
   * derives it from the invocation's remaining time (functions/request-deadline.ts), so a Redis that
   * hangs ends in the app's own error, not the runtime's "Task timed out".
   */
  timeoutFor?: () => number;
  /** Environment to read the URL and token from (default `process.env` where it exists). */
  env?: Record<string, string | undefined>;
  /**
   * Compare this machine's clock with the server's once (a HEAD request that runs no command) and
   * warn when they differ by more than 2 s (default true): scripts take the time from the caller.
   */
  checkClock?: boolean;
}

function defaultEnv(): Record<string, string | undefined> {
  const holder = globalThis as { process?: { env?: Record<string, string | undefined> } };
  return holder.process?.env ?? {};
}

function signalFor(timeoutFor: () => number): () => AbortSignal {
  return () => AbortSignal.timeout(Math.max(1, Math.floor(timeoutFor())));
}

/**
 * A Redis client for nimbusq: over Upstash's REST API (an `https://` URL and a token, the default), or
 * over TCP with a `redis://` or `rediss://` URL (core/redis/tcp-redis.ts; `cluster: true` for Redis
 * Cluster), which loads `ioredis` at its first command.
 *
 * @example
 * const redis = createRedis(); // reads UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN
 * const tcp = createRedis({ url: "rediss://default:secret@my-cache.abc.cache.amazonaws.com:6379", cluster: true });
 */
export function createRedis(options: TcpCreateRedisOptions): TcpRedis;
export function createRedis(options?: CreateRedisOptions): Redis;
export function createRedis(options: CreateRedisOptions | TcpCreateRedisOptions = {}): Redis | TcpRedis {
  if (isTcpUrl(options.url)) return new TcpRedis(options as TcpRedisOptions);
  const rest = options as CreateRedisOptions;
  const env = rest.env ?? defaultEnv();
  const url = options.url ?? env.UPSTASH_REDIS_REST_URL;
  const token = rest.token ?? env.UPSTASH_REDIS_REST_TOKEN;
  if (!url) throw new TypeError("createRedis: url is missing (set UPSTASH_REDIS_REST_URL or pass { url })");
  if (!token)
    throw new TypeError("createRedis: token is missing (set UPSTASH_REDIS_REST_TOKEN or pass { token })");
  const timeoutMs = rest.timeoutMs ?? 10_000;
  const timeout = rest.timeoutFor
    ? signalFor(rest.timeoutFor)
    : timeoutMs > 0
      ? () => AbortSignal.timeout(timeoutMs)
      : undefined;
  // The clock check goes out beside the first request, not when the client is made: a Lambda
  // function makes its client at import, and touching fetch there loads Node's HTTP stack (~40 ms of
  // every cold start) before the function has anything to send.
  const signal =
    rest.checkClock === false
      ? timeout
      : () => {
          void checkClockOnce(url);
          return timeout?.() as AbortSignal;
        };
  return new Redis({
    url,
    token,
    // Job data, ids and counters are strings: the client must not turn "123" or "null" into values.
    automaticDeserialization: false,
    enableTelemetry: false,
    // A function, not a signal object: a shared signal would stay aborted and silently null every
    // later command (see the Upstash client notes).
    ...(signal ? { signal } : {}),
  });
}
