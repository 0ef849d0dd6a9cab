/** The sweeper: the loop that promotes, recovers, starts workers and forwards events, behind its ports. */
export { defaultMaxWorkers } from "./decisions.ts";
export type { ForwardedEvent, PublishEvents } from "./forwarding.ts";
export type { QueueEvent } from "./sweep.ts";
export {
  createSweeper,
  type QueueReport,
  type Sweeper,
  type SweeperPorts,
  type SweeperResult,
  type SweeperSettings,
  type SweptQueue,
} from "./sweeper.ts";
