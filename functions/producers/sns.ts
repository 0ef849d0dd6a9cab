/**
 * SNS trigger: each notification becomes one job (or several, or none). SNS invokes asynchronously and
 * retries a failed delivery with the same message, so a record whose map throws makes the handler throw
 * after the other records were added (or is logged and dropped with `onRecordError: "skip"`).
 *
 * A malformed record (no `Sns.MessageId` or `Sns.Message`) is never retried: it is logged with its index
 * and the field, dropped, and listed in the answer's `invalidRecords`. An event without a `Records`
 * array throws a ValidationError.
 *
 * Job id: `sns-<Sns.MessageId>`.
 */
import type { SNSEvent, SNSEventRecord } from "aws-lambda";
import type { SourceRecord } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ListedRecordsHandler, listedRecordsHandler } from "./listed-records.ts";
import type { ProducerOptions } from "./producer-options.ts";
import type { OnRecordError } from "./record-failures.ts";
import { type Check, idAt, shapeProblem } from "./record-shape.ts";

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
export function snsProducer(options: SnsProducerOptions): ListedRecordsHandler<SNSEvent> {
  return listedRecordsHandler<SNSEvent, SNSEventRecord>(source, options, snsEntry);
}

const checks: Check[] = [
  ["Sns", "object"],
  ["Sns.MessageId", "id"],
  ["Sns.Message", "string"],
];

function snsEntry(record: SNSEventRecord, index: number): SourceRecord<SNSEventRecord> {
  const invalid = shapeProblem(source, `Records[${index}]`, record, checks);
  if (invalid) return { record, jobId: undefined, itemId: idAt(record, "Sns.MessageId"), invalid };
  const id = record.Sns.MessageId;
  return { record, jobId: derivedJobId("sns", id), itemId: id };
}
