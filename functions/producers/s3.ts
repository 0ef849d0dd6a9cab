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
 */
import type { Context, S3Event, S3EventRecord } from "aws-lambda";
import { enqueueRecords, type SourceRecord } from "./enqueue-records.ts";
import { derivedJobId } from "./job-ids.ts";
import { type ProducerOptions, queueOf } from "./producer-options.ts";
import { type OnRecordError, throwOrSkip } from "./record-failures.ts";

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
export function s3Producer(
  options: S3ProducerOptions,
): (event: S3Event, context: Context) => Promise<{ jobIds: string[] }> {
  const queue = queueOf(source, options);
  return async (event, context) => {
    const entries = event.Records.map(s3Entry);
    const { map, jobId } = options;
    const outcome = await enqueueRecords(queue(), entries, { map, jobId, context, source });
    throwOrSkip(source, outcome.failures, entries.length, options.onRecordError ?? "throw");
    return { jobIds: outcome.jobIds.flat() };
  };
}

/** The object key as stored: S3 event notifications URL-encode it, with `+` for spaces. */
export function s3ObjectKey(record: S3EventRecord): string {
  return decodeURIComponent(record.s3.object.key.replace(/\+/g, " "));
}

function s3Entry(record: S3EventRecord): SourceRecord<S3EventRecord> {
  const { bucket, object } = record.s3;
  // Typed as always present, but only PUT and DELETE events carry a sequencer.
  const sequencer = object.sequencer as string | undefined;
  const version = sequencer || `${object.versionId ?? ""}@${record.eventName}@${record.eventTime}`;
  const identity = `${bucket.name}/${object.key}@${version}`;
  return { record, jobId: derivedJobId("s3", identity), itemId: identity };
}
