/** Queues: Queue and FlowProducer, maintenance and metrics (adds live in core/adds/). */
export { type FlowOpts, FlowProducer, type FlowProducerOptions, type JobNode } from "./flow-producer.ts";
export type { GroupStatus, GroupSummary } from "./groups.ts";
export {
  type CleanState,
  cleanStates,
  type ObliterateOptions,
  type PromoteJobsOptions,
  type RetryJobsOptions,
} from "./maintenance.ts";
export { Queue } from "./queue.ts";
export type { QueueListener } from "./queue-getters.ts";
export { type MetricsQueue, type QueueMetrics, readQueueMetrics } from "./queue-metrics.ts";
export type { Metrics } from "./queue-settings.ts";
