/**
 * The Redis client a handler uses: the one given, or one built from UPSTASH_REDIS_REST_URL and the
 * token — UPSTASH_REDIS_REST_TOKEN, or the SSM parameter UPSTASH_REDIS_REST_TOKEN_PARAM names, read
 * before the first command (see secrets.ts). Each request's timeout follows the invocation's
 * remaining time (request-deadline.ts). A missing URL or token is createRedis's error, which names
 * the variable.
 */
import { createRedis, type RedisPort, type UpstashRedisLike } from "../../core/index.ts";
import { requestTimeoutMs } from "../request-deadline.ts";
import { parameterSuffix, type SecretOptions, secretFromEnv } from "./secrets.ts";

const tokenVariable = "UPSTASH_REDIS_REST_TOKEN";

export function redisOrEnv(
  redis: UpstashRedisLike | RedisPort | undefined,
  env: Record<string, string | undefined> = process.env,
  secrets: SecretOptions = {},
): UpstashRedisLike | RedisPort {
  if (redis) return redis;
  if (env[tokenVariable] || !env[tokenVariable + parameterSuffix])
    return createRedis({ env, timeoutFor: requestTimeoutMs });
  return redisAfterSecret(async () => {
    const token = (await secretFromEnv(tokenVariable, env, secrets)) as string;
    return createRedis({ env, token, timeoutFor: requestTimeoutMs });
  });
}

type Client = ReturnType<typeof createRedis>;

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
