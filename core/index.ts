export type { AddOutcome } from "./add-jobs.ts";
export { type CreateRedisOptions, createRedis } from "./client.ts";
export {
  JobLockedError,
  ParentConflictError,
  ParentNotFoundError,
  QueueError,
  UnexpectedReplyError,
  ValidationError,
} from "./errors.ts";
export { FlowProducer, type FlowProducerOptions, type JobNode } from "./flow-producer.ts";
export { Job } from "./job.ts";
export { Queue, type QueueOptions } from "./queue.ts";
export { type RedisPort, toRedisPort, type UpstashRedisLike } from "./redis-port.ts";
export type * from "./types.ts";
