/**
 * SQS trigger: each message becomes one job (or several, or none) and the whole batch is added in one
 * call. The answer names exactly the messages that were not added, so only those return to the queue.
 *
 * The event source mapping needs `FunctionResponseTypes: [ReportBatchItemFailures]`: without it Lambda
 * ignores the answer and deletes the failed messages along with the others.
 *
 * Job id: `sqs-<messageId>`. A message redelivered after a lost answer or a visibility timeout finds
 * its job and makes no second one. On a FIFO queue, once a message fails the later messages of its
 * message group are reported too, without being added, so the group keeps its order on the retry.
 *
 * A malformed message (no `messageId`, `body`, `attributes` or `eventSourceARN`) fails alone: it is
 * reported by its messageId and logged with its index and the field; one without a messageId cannot be
 * reported, so it is logged and dropped. An event without a `Records` array throws a ValidationError.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { enqueueRecords, type SourceRecord } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ProducerOptions, queueOf } from "./producer-options.ts";
import { batchItemFailures } from "./record-failures.ts";
import { type Check, eventRecords, idAt, shapeProblem } from "./record-shape.ts";

export type SqsProducerOptions = ProducerOptions<SQSRecord>;

const source = "sqsProducer";

/**
 * @example
 * export const handler = sqsProducer({
 *   queue: "email",
 *   map: (record) => ({ name: "send", data: JSON.parse(record.body), opts: { attempts: 3 } }),
 * });
 */
export function sqsProducer(
  options: SqsProducerOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const queue = queueOf(source, options);
  return async (event, context) => {
    const entries = eventRecords<SQSRecord>(source, event).map(sqsEntry);
    const { map, jobId } = options;
    const { failures } = await enqueueRecords(queue(), entries, {
      map,
      jobId,
      context,
      source,
      kick: options.kick,
      wakeWithinMs: options.wakeWithinMs,
    });
    return batchItemFailures(source, failures, entries.length, true);
  };
}

const checks: Check[] = [
  ["messageId", "id"],
  ["body", "string"],
  ["attributes", "object"],
  ["eventSourceARN", "string"],
];

function sqsEntry(record: SQSRecord, index: number): SourceRecord<SQSRecord> {
  const invalid = shapeProblem(source, `Records[${index}]`, record, checks);
  if (invalid) return { record, jobId: undefined, itemId: idAt(record, "messageId"), invalid };
  const group = record.attributes.MessageGroupId;
  const fifo = record.eventSourceARN.endsWith(".fifo") && group !== undefined;
  return {
    record,
    jobId: derivedJobId("sqs", record.messageId),
    itemId: record.messageId,
    ...(fifo ? { orderGroup: group } : {}),
  };
}
