/** QueueEvents (BullMQ's, over HTTP polling) and waiting for a job to finish. */
export {
  type AnyQueueEvents,
  QueueEvents,
  type QueueEventsJobListener,
  type QueueEventsListener,
  type QueueEventsOptions,
} from "./queue-events.ts";
export { JobFailedError } from "./wait-until-finished.ts";
