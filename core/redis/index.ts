/** The Redis side: the port core talks through, the Upstash client, the default prefix. */

export { classifyFailure, type Failure, type FailureKind, RedisCallError } from "./call-errors.ts";
export { type CreateRedisOptions, createRedis, isTcpUrl, type TcpCreateRedisOptions } from "./client.ts";
export { defaultPrefix } from "./keys.ts";
export type { StreamEntry } from "./redis-port.ts";
export { type RedisPort, toRedisPort, type UpstashRedisLike } from "./redis-port.ts";
export { defaultRetryWindowMs, type RedisRetryOptions } from "./retry.ts";
export { isShardMap, type RedisOption, ShardMap, type ShardMapOptions } from "./shard-map.ts";
export { TcpRedis, type TcpRedisOptions } from "./tcp-redis.ts";
