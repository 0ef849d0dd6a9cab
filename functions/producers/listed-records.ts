/**
 * The handler of a trigger whose event is a list of records retried as a whole (S3, SNS): every
 * well-formed record is added; malformed ones are logged and listed in the answer's
 * `invalidRecords`; a record whose map throws makes the handler throw after the others were added
 * (or is skipped with `onRecordError: "skip"`).
 */
import type { Context } from "aws-lambda";
import { enqueueRecords, type SourceRecord } from "./enqueue-records.ts";
import { type ProducerOptions, queueOf } from "./producer-options.ts";
import { type InvalidRecord, type OnRecordError, throwOrSkip } from "./record-failures.ts";
import { eventRecords } from "./record-shape.ts";

export type ListedRecordsHandler<E> = (
  event: E,
  context: Context,
) => Promise<{ jobIds: string[]; invalidRecords: InvalidRecord[] }>;

export function listedRecordsHandler<E, R>(
  source: string,
  options: ProducerOptions<R> & { onRecordError?: OnRecordError },
  entryOf: (record: R, index: number) => SourceRecord<R>,
): ListedRecordsHandler<E> {
  const queue = queueOf(source, options);
  return async (event, context) => {
    const entries = eventRecords<R>(source, event).map(entryOf);
    const { map, jobId } = options;
    const outcome = await enqueueRecords(queue(), entries, {
      map,
      jobId,
      context,
      source,
      kick: options.kick,
      wakeWithinMs: options.wakeWithinMs,
    });
    const invalidRecords = throwOrSkip(
      source,
      outcome.failures,
      entries.length,
      options.onRecordError ?? "throw",
    );
    return { jobIds: outcome.jobIds.flat(), invalidRecords };
  };
}
