/**
 * The Redis client a handler uses: the one given; or Redis over TCP when NIMBUSQ_REDIS_URL is set (a
 * `redis://` or `rediss://` URL, or the SSM parameter NIMBUSQ_REDIS_URL_PARAM names, since the URL
 * carries the password; NIMBUSQ_REDIS_CLUSTER=true for Redis Cluster); else one built from
 * UPSTASH_REDIS_REST_URL and the token — UPSTASH_REDIS_REST_TOKEN, or the SSM parameter
 * UPSTASH_REDIS_REST_TOKEN_PARAM names, read before the first command (see secrets.ts). Each REST
 * request's timeout follows the invocation's remaining time (request-deadline.ts). A missing URL or
 * token is createRedis's error, which names the variable.
 */
import {
  createRedis,
  isTcpUrl,
  type RedisOption,
  TcpRedis,
  type UpstashRedisLike,
  ValidationError,
} from "../../core/index.ts";
import { requestTimeoutMs } from "../request-deadline.ts";
import { parameterSuffix, type SecretOptions, secretFromEnv } from "./secrets.ts";
import { shardMapFromEnv } from "./shards-env.ts";

const tokenVariable = "UPSTASH_REDIS_REST_TOKEN";
const tcpVariable = "NIMBUSQ_REDIS_URL";
const clusterVariable = "NIMBUSQ_REDIS_CLUSTER";

/**
 * The TCP client for a URL from the environment: refused, naming the variable (with a database's
 * suffix, `_MAIN`, under a shard map), unless redis:// or rediss://.
 */
function tcpRedis(url: string, env: Record<string, string | undefined>, suffix: string): TcpRedis {
  const where = "redis from the environment";
  if (!isTcpUrl(url.trim()))
    throw new ValidationError(tcpVariable + suffix, "a redis:// or rediss:// URL", where);
  const cluster = env[clusterVariable]?.trim() || "false";
  if (cluster !== "true" && cluster !== "false") {
    throw new ValidationError(clusterVariable + suffix, '"true" or "false"', where);
  }
  return new TcpRedis({ url: url.trim(), cluster: cluster === "true" });
}

/**
 * The client the environment names: a shard map over several databases with NIMBUSQ_DATABASES
 * (functions/config/shards-env.ts), TCP with NIMBUSQ_REDIS_URL(_PARAM), else Upstash's REST API.
 */
export function redisFromEnv(
  env: Record<string, string | undefined> = process.env,
  secrets: SecretOptions = {},
): RedisOption {
  return redisOrEnv(undefined, env, secrets);
}

export function redisOrEnv(
  redis: RedisOption | undefined,
  env: Record<string, string | undefined> = process.env,
  secrets: SecretOptions = {},
): RedisOption {
  if (redis) return redis;
  return (
    shardMapFromEnv(env, (view, suffix) => singleFromEnv(view, secrets, suffix)) ??
    singleFromEnv(env, secrets, "")
  );
}

/** One database's client from the environment (or a database's view of it). */
function singleFromEnv(
  env: Record<string, string | undefined>,
  secrets: SecretOptions,
  suffix: string,
): UpstashRedisLike {
  const tcpUrl = env[tcpVariable];
  if (tcpUrl) return tcpRedis(tcpUrl, env, suffix);
  if (env[tcpVariable + parameterSuffix]) {
    return redisAfterSecret(async () =>
      tcpRedis((await secretFromEnv(tcpVariable, env, secrets)) as string, env, suffix),
    );
  }
  if (env[tokenVariable] || !env[tokenVariable + parameterSuffix])
    return createRedis({ env, timeoutFor: requestTimeoutMs });
  return redisAfterSecret(async () => {
    const token = (await secretFromEnv(tokenVariable, env, secrets)) as string;
    return createRedis({ env, token, timeoutFor: requestTimeoutMs });
  });
}

type Client = ReturnType<typeof createRedis> | TcpRedis;

/** A client whose commands first wait for the real one (built once; a failed build is retried). */
function redisAfterSecret(build: () => Promise<Client>): UpstashRedisLike {
  let client: Promise<Client> | undefined;
  const ready = () => {
    if (!client) {
      const pending = build();
      pending.catch(() => {
        if (client === pending) client = undefined;
      });
      client = pending;
    }
    return client;
  };
  return {
    evalsha: async (sha1, keys, args) => (await ready()).evalsha(sha1, keys, args) as never,
    eval: async (script, keys, args) => (await ready()).eval(script, keys, args) as never,
    hgetall: async (key) => (await ready()).hgetall(key),
    xrange: async (key, start, end, count) => (await ready()).xrange(key, start, end, count),
    xrevrange: async (key, end, start, count) => (await ready()).xrevrange(key, end, start, count),
    zrange: async (key, min, max, options) =>
      (await ready()).zrange(key, min, max, options?.withScores ? { withScores: true } : undefined),
  };
}
