/**
 * DynamoDB stream trigger: each stream record becomes one job (or several, or none), all added in one
 * call. By default the answer names the records that were not added (`batchItemFailures`, by
 * `dynamodb.SequenceNumber`); Lambda then retries the batch from the first of them, and the records
 * already added find their jobs again.
 *
 * The event source mapping needs `FunctionResponseTypes: [ReportBatchItemFailures]` for the default
 * `onRecordError: "report"`: without it Lambda ignores the answer and moves past failed records. Use
 * `"throw"` to fail the whole batch instead, or `"skip"` to log and drop records whose map throws.
 *
 * Job id: `ddb-<eventID>`, or `ddb-<eventSourceARN>@<SequenceNumber>` for a record without an eventID.
 * Unless records are skipped, once a record fails the later changes of the same item (same `Keys`) are
 * held back and reported too, so the item's jobs keep the stream's order on the retry.
 *
 * A malformed record (no `dynamodb`, or neither an eventID nor eventSourceARN with SequenceNumber) is
 * never reported (it would block the shard until its retries run out): it is logged with its index and
 * the field, and dropped, with a count of the dropped records. An event without a `Records` array
 * throws a ValidationError.
 */
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from "aws-lambda";
import { ValidationError } from "../../core/index.ts";
import { enqueueRecords, type SourceRecord } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ProducerOptions, queueOf } from "./producer-options.ts";
import { batchItemFailures, throwOrSkip } from "./record-failures.ts";
import { type Check, eventRecords, idAt, shapeProblem } from "./record-shape.ts";

export interface DynamodbStreamProducerOptions extends ProducerOptions<DynamoDBRecord> {
  /** Failed records: `report` them (default), `throw`, or `skip` those whose map throws. */
  onRecordError?: "report" | "throw" | "skip";
}

const source = "dynamodbStreamProducer";

/**
 * @example
 * export const handler = dynamodbStreamProducer({
 *   queue: "search-index",
 *   map: (record) => (record.eventName === "REMOVE" ? null : { name: "index", data: record.dynamodb?.NewImage }),
 * });
 */
export function dynamodbStreamProducer(
  options: DynamodbStreamProducerOptions,
): (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse> {
  const queue = queueOf(source, options);
  const onRecordError = options.onRecordError ?? "report";
  return async (event, context) => {
    const records = eventRecords<DynamoDBRecord>(source, event);
    const entries = records.map((record, index) => dynamodbEntry(record, index, onRecordError !== "skip"));
    const { map, jobId } = options;
    const { failures } = await enqueueRecords(queue(), entries, {
      map,
      jobId,
      context,
      source,
      kick: options.kick,
      wakeWithinMs: options.wakeWithinMs,
    });
    if (onRecordError === "report") return batchItemFailures(source, failures, entries.length, false);
    throwOrSkip(source, failures, entries.length, onRecordError);
    return { batchItemFailures: [] };
  };
}

const checks: Check[] = [
  ["dynamodb", "object"],
  ["dynamodb.Keys", "object?"],
  ["dynamodb.SequenceNumber", "string?"],
  ["eventID", "string?"],
  ["eventSourceARN", "string?"],
];

function dynamodbEntry(
  record: DynamoDBRecord,
  index: number,
  keepOrder: boolean,
): SourceRecord<DynamoDBRecord> {
  const where = `Records[${index}]`;
  let invalid = shapeProblem(source, where, record, checks);
  if (
    !invalid &&
    !idAt(record, "eventID") &&
    !(idAt(record, "eventSourceARN") && idAt(record, "dynamodb.SequenceNumber"))
  )
    invalid = new ValidationError(
      `${where}.eventID`,
      "a non-empty string, or eventSourceARN and dynamodb.SequenceNumber set",
      source,
    );
  if (invalid) return { record, jobId: undefined, itemId: idAt(record, "dynamodb.SequenceNumber"), invalid };
  const sequence = record.dynamodb?.SequenceNumber;
  const keys = record.dynamodb?.Keys;
  const identity =
    record.eventID ??
    (sequence !== undefined && record.eventSourceARN ? `${record.eventSourceARN}@${sequence}` : undefined);
  return {
    record,
    jobId: identity === undefined ? undefined : derivedJobId("ddb", identity),
    itemId: sequence,
    ...(keepOrder && keys ? { orderGroup: JSON.stringify(keys) } : {}),
  };
}
