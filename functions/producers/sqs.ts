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
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { enqueueRecords, type SourceRecord } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ProducerOptions, queueOf } from "./producer-options.ts";
import { batchItemFailures } from "./record-failures.ts";

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
    const entries = event.Records.map(sqsEntry);
    const { map, jobId } = options;
    const { failures } = await enqueueRecords(queue(), entries, { map, jobId, context, source });
    return batchItemFailures(source, failures, entries.length);
  };
}

function sqsEntry(record: SQSRecord): SourceRecord<SQSRecord> {
  const group = record.attributes.MessageGroupId;
  const fifo = record.eventSourceARN.endsWith(".fifo") && group !== undefined;
  return {
    record,
    jobId: derivedJobId("sqs", record.messageId),
    itemId: record.messageId,
    ...(fifo ? { orderGroup: group } : {}),
  };
}
