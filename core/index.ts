export { ActiveJob } from "./active-job.ts";
export { JobIdInFlightError, StagedAddExpiredError } from "./add-calls.ts";
export type { AddedJob, AddOutcome } from "./add-jobs.ts";
export type { BackoffStrategy } from "./backoff.ts";
export { type CreateRedisOptions, createRedis } from "./client.ts";
export { type DeadLetterData, deadLetterId } from "./dead-letter.ts";
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
export { FlowProducer, type FlowProducerOptions, type JobNode } from "./flow-producer.ts";
export { Job, type RetryOptions } from "./job.ts";
export type { ChangePriorityOptions, RemoveOptions } from "./job-moves.ts";
export type { CleanState, ObliterateOptions, PromoteJobsOptions, RetryJobsOptions } from "./maintenance.ts";
export { Queue, type QueueOptions } from "./queue.ts";
export {
  type AnyQueueEvents,
  QueueEvents,
  type QueueEventsJobListener,
  type QueueEventsListener,
  type QueueEventsOptions,
} from "./queue-events.ts";
export { type MetricsQueue, type QueueMetrics, readQueueMetrics } from "./queue-metrics.ts";
export type { Metrics } from "./queue-settings.ts";
export type { StreamEntry } from "./redis-port.ts";
export { type RedisPort, toRedisPort, type UpstashRedisLike } from "./redis-port.ts";
export { defaultDeadLetterQueue, type RedriveOptions, type RedriveResult } from "./redrive.ts";
export {
  advanceCursors,
  nextDueAt,
  type QueueEvent,
  type QueueSweep,
  releaseSweeperLock,
  type SweepRequest,
  type SweepResult,
  sleepBeforeNextPass,
  sweep,
  trackWorkerInvocation,
  workersToStart,
} from "./sweep.ts";
export {
  type Attributes as TelemetryAttributeValues,
  type ContextManager,
  type Span,
  SpanKind,
  type Telemetry,
  TelemetryAttributes,
  type Tracer,
} from "./telemetry.ts";
export type * from "./types.ts";
export { JobFailedError } from "./wait-until-finished.ts";
export {
  addSummaries,
  drainInvocation,
  type InvocationOptions,
  type NextStep,
  nextStep,
} from "./worker/invocation.ts";
export {
  type DrainOptions,
  type DrainSummary,
  type EventsLevel,
  type Processor,
  type StopReason,
  Worker,
  type WorkerEvents,
  type WorkerOptions,
} from "./worker/worker.ts";
