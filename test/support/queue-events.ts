/**
 * Shared by the QueueEvents suites: every event name BullMQ 6.7.0's QueueEvents types, a recorder
 * that works on nimbusq's QueueEvents and on BullMQ's alike (event, arguments, stream id), and the
 * two readers made side by side on one kit's queue.
 */
import { QueueEvents as BullQueueEvents } from "bullmq";
import { QueueEvents, type QueueEventsOptions } from "../../core/index.ts";
import { bullConnection, type Interop } from "./bullmq-peer.ts";

/** Every event of BullMQ's QueueEventsListener but `error` (and ioredis's own). */
export const allEventNames = [
  "active",
  "added",
  "cleaned",
  "completed",
  "deduplicated",
  "delayed",
  "drained",
  "duplicated",
  "failed",
  "paused",
  "progress",
  "removed",
  "resumed",
  "retries-exhausted",
  "stalled",
  "waiting",
  "waiting-children",
] as const;

export interface Heard {
  event: string;
  /** What the listener got first: the arguments object, or the id for `drained`. */
  args: unknown;
  /** The stream id passed last (undefined for `drained`, whose only argument is the id). */
  id: unknown;
}

type Listenable = { on(event: string, listener: (...args: unknown[]) => void): unknown };

/** Records `names` (plus any custom names) as they are emitted, in order. */
export function record(events: QueueEvents | BullQueueEvents, names: readonly string[]): Heard[] {
  const heard: Heard[] = [];
  for (const event of names) {
    (events as unknown as Listenable).on(event, (args: unknown, id: unknown) =>
      heard.push({ event, args, id }),
    );
  }
  return heard;
}

/** A nimbusq QueueEvents on the kit's queue, polling fast, closed after the test. */
export function nimbusEvents(
  io: Interop,
  queue: string,
  options: Partial<QueueEventsOptions> = {},
): QueueEvents {
  const events = new QueueEvents(queue, {
    redis: io.redis,
    prefix: io.prefix,
    poll: { minMs: 10, maxMs: 50 },
    ...options,
  });
  io.defer(() => events.close());
  return events;
}

/** BullMQ's QueueEvents on the kit's queue from the stream's start, closed after the test. */
export function bullEvents(io: Interop, queue: string): BullQueueEvents {
  const events = new BullQueueEvents(queue, {
    connection: bullConnection(),
    prefix: io.prefix,
    lastEventId: "0-0",
  });
  io.defer(() => events.close());
  return events;
}

/** The newest id of the kit's queue's events stream (read over TCP, not through nimbusq). */
export async function newestId(io: Interop, queue: string): Promise<string> {
  const [newest] = await io.raw.xrevrange(io.key(queue, "events"), "+", "-", "COUNT", 1);
  if (!newest) throw new Error(`the events stream of "${queue}" is empty`);
  return newest[0];
}

/** The part of a log up to and including the entry with stream id `id`. */
export function through(heard: readonly Heard[], id: string): Heard[] {
  const at = heard.findIndex((entry) => entry.id === id || (entry.event === "drained" && entry.args === id));
  return at < 0 ? [] : heard.slice(0, at + 1);
}
