/** The sweeper: the loop that promotes, recovers, starts workers and forwards events, behind its ports. */
export { defaultMaxWorkers } from "./decisions.ts";
export type { ForwardedEvent, PublishEvents } from "./forwarding.ts";
export { createSweeper } from "./shards.ts";
export type { QueueEvent } from "./sweep.ts";
export type {
  QueueReport,
  Sweeper,
  SweeperPorts,
  SweeperResult,
  SweeperSettings,
  SweepFailure,
  SweptQueue,
} from "./sweeper.ts";
