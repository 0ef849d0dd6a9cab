/**
 * Queue events as EventBridge entries: what the sweeper forwards to a bus, one entry per event, with
 * the event's fields (and its job's name) as the JSON detail and `nimbusq.job.<event>` or
 * `nimbusq.queue.<event>` as the detail type, so rules can match on either.
 */
import type { PublishEvents, QueueEvent } from "../../core/index.ts";
import { createEventPublisher, type EventEntry, type Publish } from "./event-publisher.ts";

/** The EventBridge entry for one queue event: `nimbusq.job.<event>` (or `nimbusq.queue.<event>`). */
export function eventEntry(queue: string, event: QueueEvent, bus: string, source: string): EventEntry {
  const { event: name = "unknown", ...fields } = event.fields;
  const detail = {
    queue,
    eventId: event.id,
    ...(event.jobName !== undefined ? { name: event.jobName } : {}),
    ...fields,
  };
  return {
    EventBusName: bus,
    Source: source,
    DetailType: `nimbusq.${fields.jobId !== undefined ? "job" : "queue"}.${name}`,
    Detail: JSON.stringify(detail),
  };
}

/**
 * The sweeper's `publish` port for `eventBus` (none: no forwarding): its events as entries, sent by
 * `publish` (default PutEvents through a publisher that loads the AWS SDK on its first call, so an idle
 * tick never does).
 */
export function busPublisher(options: {
  eventBus?: string;
  eventSource?: string;
  publish?: Publish;
}): PublishEvents | undefined {
  const { eventBus, eventSource = "nimbusq", publish = createEventPublisher() } = options;
  if (!eventBus) return undefined;
  return (events) =>
    publish(events.map(({ queue, event }) => eventEntry(queue, event, eventBus, eventSource)));
}
