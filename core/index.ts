/**
 * nimbusq: BullMQ 6 job-queue semantics over Upstash Redis's HTTP API. The package's public API is
 * what each room's index offers, plus the errors and the shared types.
 */

export * from "./adds/index.ts";
export * from "./dead-letter/index.ts";
export {
  ClosedError,
  DelayedError,
  JobBelongsToSchedulerError,
  JobCancelledError,
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
export * from "./events/index.ts";
export * from "./job/index.ts";
export * from "./queue/index.ts";
export * from "./redis/index.ts";
export * from "./schedulers/index.ts";
export * from "./sweeper/index.ts";
export * from "./telemetry/index.ts";
export type * from "./types.ts";
export * from "./worker/index.ts";
