/**
 * EventBridge trigger: the event becomes one job (or several, or none). EventBridge invokes
 * asynchronously and Lambda retries a failed invocation with the same event, so a map that throws makes
 * the handler throw (or the event is logged and dropped with `onRecordError: "skip"`).
 *
 * Job id: `eb-<id>`. A replayed event (from an archive) carries `replay-name` and gets
 * `eb-<id>@<replay-name>`: a replay is a deliberate request to process the events again, while a
 * redelivery of the same replayed event still finds its job.
 *
 * A malformed event (no `id`, `detail-type` or `detail`) throws a ValidationError naming the field,
 * before anything is added; the error carries no part of the event.
 */
import type { Context, EventBridgeEvent } from "aws-lambda";
import { enqueueRecords } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ProducerOptions, queueOf } from "./producer-options.ts";
import { type OnRecordError, throwOrSkip } from "./record-failures.ts";
import { type Check, shapeProblem } from "./record-shape.ts";

export interface EventBridgeProducerOptions<TDetailType extends string, TDetail>
  extends ProducerOptions<EventBridgeEvent<TDetailType, TDetail>> {
  /** An event whose map throws: `throw` (default), or `skip` it. */
  onRecordError?: OnRecordError;
}

const source = "eventBridgeProducer";

const checks: Check[] = [
  ["id", "id"],
  ["detail-type", "string"],
  ["detail", "defined"],
  ["replay-name", "string?"],
];

/**
 * @example
 * export const handler = eventBridgeProducer<"Order Placed", { orderId: string }>({
 *   queue: "orders",
 *   map: (event) => ({ name: "fulfil", data: event.detail }),
 * });
 */
export function eventBridgeProducer<TDetailType extends string = string, TDetail = unknown>(
  options: EventBridgeProducerOptions<TDetailType, TDetail>,
): (event: EventBridgeEvent<TDetailType, TDetail>, context: Context) => Promise<{ jobIds: string[] }> {
  const queue = queueOf(source, options);
  return async (event, context) => {
    const invalid = shapeProblem(source, "event", event, checks);
    if (invalid) throw invalid;
    const replay = event["replay-name"];
    const identity = replay ? `${event.id}@${replay}` : event.id;
    const entries = [{ record: event, jobId: derivedJobId("eb", identity), itemId: identity }];
    const { map, jobId } = options;
    const outcome = await enqueueRecords(queue(), entries, {
      map,
      jobId,
      context,
      source,
      kick: options.kick,
      wakeWithinMs: options.wakeWithinMs,
    });
    throwOrSkip(source, outcome.failures, entries.length, options.onRecordError ?? "throw");
    return { jobIds: outcome.jobIds.flat() };
  };
}
