/**
 * Event forwarding for the sweeper loop: a pass's new events go to the `publish` port (an EventBridge
 * bus in the Lambda adapter), then each queue's cursor moves to its last event before its first one
 * that failed, so a failed event and those after it are read, and sent, again by the next pass.
 */
import type { RedisPort } from "../redis/redis-port.ts";
import { advanceCursors, type QueueEvent, type QueueSweep } from "./sweep.ts";

/** One queue event as the sweeper forwards it. */
export interface ForwardedEvent {
  queue: string;
  event: QueueEvent;
}

/** Sends events on; answers the indices (into `events`) that were not accepted. */
export type PublishEvents = (events: ForwardedEvent[]) => Promise<{ failed: number[] }>;

/** Most events a pass reads per queue for forwarding; a queue with this many has more to read. */
export const forwardBatch = 100;

/** Where each queue's cursor may move after a publish: its last event before its first failed one. */
export function cursorAdvances(
  events: readonly ForwardedEvent[],
  failed: readonly number[],
): { queue: string; lastId: string }[] {
  const firstFailure = new Map<string, number>();
  for (const index of failed) {
    const queue = events[index]?.queue as string;
    firstFailure.set(queue, Math.min(firstFailure.get(queue) ?? index, index));
  }
  const lastIds = new Map<string, string>();
  for (const [index, { queue, event }] of events.entries()) {
    const stop = firstFailure.get(queue);
    if (stop === undefined || index < stop) lastIds.set(queue, event.id);
  }
  return [...lastIds].map(([queue, lastId]) => ({ queue, lastId }));
}

/**
 * Publishes a pass's new events and moves the cursors. `more` is true when every event went and some
 * queue had a full batch: the loop reads again at once instead of sleeping.
 */
export async function forwardEvents(
  port: RedisPort,
  prefix: string,
  token: string,
  swept: readonly QueueSweep[],
  publish: PublishEvents,
): Promise<{ forwarded: number; more: boolean }> {
  const events = swept.flatMap((s) => s.events.map((event) => ({ queue: s.queue, event })));
  if (events.length === 0) return { forwarded: 0, more: false };
  const { failed } = await publish(events);
  const again = [...new Set(failed.map((index) => events[index]?.queue as string))];
  await advanceCursors(port, prefix, token, cursorAdvances(events, failed), again);
  return {
    forwarded: events.length - failed.length,
    more: failed.length === 0 && swept.some((s) => s.events.length >= forwardBatch),
  };
}
