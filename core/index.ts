export { type DeadLetterData, deadLetterId } from "./dead-letter/dead-letter.ts";
export { defaultDeadLetterQueue, type RedriveOptions, type RedriveResult } from "./dead-letter/redrive.ts";
export {
  ClosedError,
  DelayedError,
  JobBelongsToSchedulerError,
  JobLockedError,
  JobNotFoundError,
  JobNotInStateError,
  JobSchedulerConflictError,
  LeaseLostError,
  NotSupportedError,
  ParentConflictError,
  ParentNotFoundError,
  QueueError,
  QueueStateError,
  RateLimitError,
  TimeoutError,
  UnexpectedReplyError,
  UnrecoverableError,
  ValidationError,
  WaitingChildrenError,
} from "./errors.ts";
export {
  type AnyQueueEvents,
  QueueEvents,
  type QueueEventsJobListener,
  type QueueEventsListener,
  type QueueEventsOptions,
} from "./events/queue-events.ts";
export { JobFailedError } from "./events/wait-until-finished.ts";
export { ActiveJob } from "./job/active-job.ts";
export type { BackoffStrategy } from "./job/backoff.ts";
export { Job, type RetryOptions } from "./job/job.ts";
export type { ChangePriorityOptions, RemoveOptions } from "./job/job-moves.ts";
export { JobIdInFlightError, StagedAddExpiredError } from "./queue/add-calls.ts";
export type { AddedJob } from "./queue/add-jobs.ts";
export type { AddOutcome } from "./queue/add-types.ts";
export { FlowProducer, type FlowProducerOptions, type JobNode } from "./queue/flow-producer.ts";
export type {
  CleanState,
  ObliterateOptions,
  PromoteJobsOptions,
  RetryJobsOptions,
} from "./queue/maintenance.ts";
export { Queue } from "./queue/queue.ts";
export { type MetricsQueue, type QueueMetrics, readQueueMetrics } from "./queue/queue-metrics.ts";
export type { QueueOptions } from "./queue/queue-options.ts";
export type { Metrics } from "./queue/queue-settings.ts";
export { type CreateRedisOptions, createRedis } from "./redis/client.ts";
export { defaultPrefix } from "./redis/keys.ts";
export type { StreamEntry } from "./redis/redis-port.ts";
export { type RedisPort, toRedisPort, type UpstashRedisLike } from "./redis/redis-port.ts";
export type { ForwardedEvent, PublishEvents } from "./sweeper/forwarding.ts";
export type { QueueEvent, WorkerSettings } from "./sweeper/sweep.ts";
export {
  createSweeper,
  type QueueReport,
  type Sweeper,
  type SweeperPorts,
  type SweeperResult,
  type SweeperSettings,
  type SweptQueue,
} from "./sweeper/sweeper.ts";
export {
  type Attributes as TelemetryAttributeValues,
  type ContextManager,
  type Span,
  SpanKind,
  type Telemetry,
  TelemetryAttributes,
  type Tracer,
} from "./telemetry/telemetry.ts";
export type * from "./types.ts";
export {
  createFunctionWorker,
  type FunctionInvocationResult,
  type FunctionWorker,
  type FunctionWorkerOptions,
  type FunctionWorkerPorts,
  type FunctionWorkerResult,
  type InvocationRequest,
} from "./worker/function-worker.ts";
export type { NextStep } from "./worker/invocation.ts";
export {
  type DrainOptions,
  type DrainSummary,
  type Processor,
  type StopReason,
  Worker,
  type WorkerEvents,
  type WorkerOptions,
} from "./worker/worker.ts";
