/**
 * S3 trigger: each event record becomes one job (or several, or none). S3 invokes asynchronously, and
 * Lambda retries a failed invocation with the same event, so a record whose map throws makes the
 * handler throw after the other records were added (or is logged and dropped with
 * `onRecordError: "skip"`).
 *
 * Job id: `s3-<bucket>/<key>@<sequencer>` (key as S3 sends it, URL-encoded; see job-ids.ts for the
 * encoding and the hash used past 1,000 characters). The sequencer, which S3 repeats when it
 * redelivers an event, comes before the versionId because it tells apart every PUT and DELETE of a key:
 * a version's creation and its deletion carry the same versionId, and a bucket with suspended
 * versioning gives every object the versionId "null". Events without a sequencer (tagging, ACL,
 * restore, replication…) use `@<versionId>@<eventName>@<eventTime>`.
 *
 * A malformed record (no bucket name or object key, or neither a sequencer nor eventName/eventTime) is
 * never retried: it is logged with its index and the field, dropped, and listed in the answer's
 * `invalidRecords`. An event without a `Records` array throws a ValidationError.
 */
import type { S3Event, S3EventRecord } from "aws-lambda";
import type { SourceRecord } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ListedRecordsHandler, listedRecordsHandler } from "./listed-records.ts";
import type { ProducerOptions } from "./producer-options.ts";
import type { OnRecordError } from "./record-failures.ts";
import { type Check, idAt, shapeProblem } from "./record-shape.ts";

export interface S3ProducerOptions extends ProducerOptions<S3EventRecord> {
  /** A record whose map throws: `throw` (default) after adding the others, or `skip` it. */
  onRecordError?: OnRecordError;
}

const source = "s3Producer";

/**
 * @example
 * export const handler = s3Producer({
 *   queue: "thumbnails",
 *   map: (record) => ({ name: "resize", data: { bucket: record.s3.bucket.name, key: s3ObjectKey(record) } }),
 * });
 */
export function s3Producer(options: S3ProducerOptions): ListedRecordsHandler<S3Event> {
  return listedRecordsHandler<S3Event, S3EventRecord>(source, options, s3Entry);
}

/** The object key as stored: S3 event notifications URL-encode it, with `+` for spaces. */
export function s3ObjectKey(record: S3EventRecord): string {
  return decodeURIComponent(record.s3.object.key.replace(/\+/g, " "));
}

const checks: Check[] = [
  ["s3", "object"],
  ["s3.bucket", "object"],
  ["s3.bucket.name", "id"],
  ["s3.object", "object"],
  ["s3.object.key", "id"],
  ["s3.object.sequencer", "string?"],
  ["s3.object.versionId", "string?"],
];
/** What identifies an event without a sequencer. */
const unsequenced: Check[] = [
  ["eventName", "id"],
  ["eventTime", "id"],
];

function s3Entry(record: S3EventRecord, index: number): SourceRecord<S3EventRecord> {
  const where = `Records[${index}]`;
  const invalid =
    shapeProblem(source, where, record, checks) ??
    (idAt(record, "s3.object.sequencer") ? undefined : shapeProblem(source, where, record, unsequenced));
  if (invalid) return { record, jobId: undefined, itemId: undefined, invalid };
  const { bucket, object } = record.s3;
  // Typed as always present, but only PUT and DELETE events carry a sequencer.
  const sequencer = object.sequencer as string | undefined;
  const version = sequencer || `${object.versionId ?? ""}@${record.eventName}@${record.eventTime}`;
  const identity = `${bucket.name}/${object.key}@${version}`;
  return { record, jobId: derivedJobId("s3", identity), itemId: identity };
}
