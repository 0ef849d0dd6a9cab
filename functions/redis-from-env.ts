/** The Redis client a handler uses: the one given, or one built from UPSTASH_REDIS_REST_URL/TOKEN. */
import { createRedis, type RedisPort, type UpstashRedisLike } from "../core/index.ts";

export function redisOrEnv(redis: UpstashRedisLike | RedisPort | undefined): UpstashRedisLike | RedisPort {
  return redis ?? createRedis();
}
