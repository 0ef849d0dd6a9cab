/**
 * SNS trigger: each notification becomes one job (or several, or none). SNS invokes asynchronously and
 * retries a failed delivery with the same message, so a record whose map throws makes the handler throw
 * after the other records were added (or is logged and dropped with `onRecordError: "skip"`).
 *
 * Job id: `sns-<Sns.MessageId>`.
 */
import type { Context, SNSEvent, SNSEventRecord } from "aws-lambda";
import { enqueueRecords, type SourceRecord } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ProducerOptions, queueOf } from "./producer-options.ts";
import { type OnRecordError, throwOrSkip } from "./record-failures.ts";

export interface SnsProducerOptions extends ProducerOptions<SNSEventRecord> {
  /** A record whose map throws: `throw` (default) after adding the others, or `skip` it. */
  onRecordError?: OnRecordError;
}

const source = "snsProducer";

/**
 * @example
 * export const handler = snsProducer({
 *   queue: "orders",
 *   map: (record) => ({ name: "placed", data: JSON.parse(record.Sns.Message) }),
 * });
 */
export function snsProducer(
  options: SnsProducerOptions,
): (event: SNSEvent, context: Context) => Promise<{ jobIds: string[] }> {
  const queue = queueOf(source, options);
  return async (event, context) => {
    const entries = event.Records.map(snsEntry);
    const { map, jobId } = options;
    const outcome = await enqueueRecords(queue(), entries, { map, jobId, context, source });
    throwOrSkip(source, outcome.failures, entries.length, options.onRecordError ?? "throw");
    return { jobIds: outcome.jobIds.flat() };
  };
}

function snsEntry(record: SNSEventRecord): SourceRecord<SNSEventRecord> {
  const id = record.Sns.MessageId;
  return { record, jobId: derivedJobId("sns", id), itemId: id };
}
