/** Adds: one call or staged over several, their shapes and outcomes, and the queue options they use. */
export { JobIdInFlightError, StagedAddExpiredError } from "./add-calls.ts";
export type { AddedJob } from "./add-jobs.ts";
export type { AddOutcome } from "./add-types.ts";
export { type WakeHint, wakeWithinMs } from "./add-wake.ts";
export type { HandoffRequest, HandoffTarget } from "./handoff.ts";
export type { QueueOptions } from "./queue-options.ts";
