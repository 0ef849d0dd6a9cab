/**
 * What every operation on one queue carries: the Redis port, the key prefix, the queue's name, the
 * clock, and the tracing hook of the Queue or Worker it belongs to.
 */
import type { Telemetry } from "../telemetry/telemetry.ts";
import type { RedisPort } from "./redis-port.ts";
import type { ShardMap } from "./shard-map.ts";

export interface QueueContext {
  port: RedisPort;
  prefix: string;
  queueName: string;
  clock: () => number;
  /** Tracing hook of the Queue or Worker this context belongs to (see core/telemetry/telemetry.ts). */
  telemetry?: Telemetry;
  /** The shard map the port came from: links to other queues must stay on the queue's database. */
  shards?: ShardMap;
}
