/** Jobs: the Job a reader gets, the ActiveJob a processor gets, and the options of their moves. */
export { ActiveJob } from "./active-job.ts";
export type { BackoffStrategy } from "./backoff.ts";
export { type CancelOutcome, type CancelResult, maxCancelReasonLength } from "./cancel.ts";
export type { HandedOverJob } from "./handed-over.ts";
export { Job } from "./job.ts";
export type { ChangePriorityOptions, RemoveOptions, RetryOptions } from "./job-moves.ts";
