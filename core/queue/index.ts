/** Queues: Queue and FlowProducer, their options, adds, maintenance and metrics. */
export { JobIdInFlightError, StagedAddExpiredError } from "./add-calls.ts";
export type { AddedJob } from "./add-jobs.ts";
export type { AddOutcome } from "./add-types.ts";
export { FlowProducer, type FlowProducerOptions, type JobNode } from "./flow-producer.ts";
export type {
  CleanState,
  ObliterateOptions,
  PromoteJobsOptions,
  RetryJobsOptions,
} from "./maintenance.ts";
export { Queue } from "./queue.ts";
export { type MetricsQueue, type QueueMetrics, readQueueMetrics } from "./queue-metrics.ts";
export type { QueueOptions } from "./queue-options.ts";
export type { Metrics } from "./queue-settings.ts";
