/**
 * What a trigger does with the records that failed: report them to a batch event source
 * (ReportBatchItemFailures), throw so Lambda retries the event, or log and drop them.
 *
 * A malformed record (stage `record`) is never thrown: the retry would carry the same record. SQS
 * reports it by its messageId (so it reaches the queue's redrive policy); every other source, and an
 * SQS record without a messageId, logs it and drops it, and S3/SNS list it in `invalidRecords`.
 */

import { QueueError, ValidationError } from "../../core/index.ts";
import { logger } from "../log.ts";
import type { RecordFailure } from "./enqueue-records.ts";

/** A failed record as the thrown error lists it: the source's own identifier, never the record's data. */
export interface FailedRecord {
  itemId: string | undefined;
  stage: RecordFailure<unknown>["stage"];
  error: unknown;
}

/** Some records of an event were not added; the good ones were. Lambda retries the event. */
export class RecordsFailedError extends QueueError {
  override name = "RecordsFailedError" as const;
  readonly failures: FailedRecord[];

  constructor(source: string, failures: RecordFailure<unknown>[], total: number) {
    const first = failures[0];
    const summary = `${failures.length} of ${total} records were not added`;
    // The errors stay on `failures` and `cause`: a map error's message may quote the record's data.
    super(
      `${source}: ${summary} (first: record ${first?.entry.itemId ?? "(no id)"}, ${kind(first?.error)})`,
      {
        cause: first?.error,
      },
    );
    this.failures = failures.map(({ entry, stage, error }) => ({ itemId: entry.itemId, stage, error }));
  }
}

/** A malformed record as an S3 or SNS handler's answer lists it: where it is and which field is wrong. */
export interface InvalidRecord {
  index: number;
  /** The source's id for it (SNS MessageId) when the record has a usable one. */
  itemId: string | undefined;
  /** The offending field, e.g. `Records[2].s3.object.key`. */
  field: string;
}

/** What to do with a record whose map threw or returned a job core refuses. */
export type OnRecordError = "throw" | "skip";

/**
 * How a failure is described in our messages and logs: nimbusq's own errors by their message (it names
 * fields and rules, never data); any other error (the user's map, JSON.parse) by its class only, since
 * its message may quote the record's data. The error itself stays on `failures` / `cause`.
 */
function kind(error: unknown): string {
  if (error instanceof QueueError) return `${error.name}: ${error.message}`;
  if (error instanceof Error) return `${error.name} (message withheld: it may quote the record)`;
  return typeof error;
}

/** One line per failed record, so a reported or dropped record is never silent. */
function logFailure(source: string, failure: RecordFailure<unknown>, action: string): void {
  const { entry, stage, error } = failure;
  logger.warn(`${source}: record ${entry.itemId ?? "(no id)"} ${action} (${stage}): ${kind(error)}`, {
    source,
    ...(entry.itemId !== undefined ? { record_id: entry.itemId } : {}),
    stage,
  });
}

/**
 * For sources without partial responses: map failures are dropped (`skip`) or thrown; an add failure
 * always throws, since dropping it would lose a record that was valid.
 */
export function throwOrSkip(
  source: string,
  failures: RecordFailure<unknown>[],
  total: number,
  onRecordError: OnRecordError,
): InvalidRecord[] {
  const kept: RecordFailure<unknown>[] = [];
  const invalid = dropInvalid(source, failures, total, () => false);
  for (const failure of failures) {
    if (failure.stage === "record") continue;
    if (onRecordError === "skip" && failure.stage === "map") logFailure(source, failure, "skipped");
    else kept.push(failure);
  }
  if (kept.length > 0) throw new RecordsFailedError(source, kept, total);
  return invalid.map(({ index, entry, error }) => ({
    index,
    itemId: entry.itemId,
    field: error instanceof ValidationError ? error.field : "(record)",
  }));
}

/** Logs (one line each, then a count) and returns the malformed records that `report` does not keep. */
function dropInvalid(
  source: string,
  failures: RecordFailure<unknown>[],
  total: number,
  report: (failure: RecordFailure<unknown>) => boolean,
): RecordFailure<unknown>[] {
  const dropped = failures.filter((f) => f.stage === "record" && !report(f));
  for (const failure of dropped) logFailure(source, failure, "dropped as malformed");
  if (dropped.length > 0)
    logger.warn(`${source}: ${dropped.length} of ${total} records were malformed and dropped`, {
      source,
      dropped: dropped.length,
      records: total,
    });
  return dropped;
}

/**
 * The partial batch response naming each failed record. Malformed records are reported when
 * `reportInvalid` and they have an identifier, else logged and dropped. Any other failure without an
 * identifier cannot be reported, so the whole event is thrown back instead (safe: every id is derived).
 */
export function batchItemFailures(
  source: string,
  failures: RecordFailure<unknown>[],
  total: number,
  reportInvalid: boolean,
): { batchItemFailures: { itemIdentifier: string }[] } {
  const dropped = new Set(
    dropInvalid(source, failures, total, (f) => reportInvalid && f.entry.itemId !== undefined),
  );
  const reported = failures.filter((f) => !dropped.has(f));
  if (reported.some((f) => f.entry.itemId === undefined))
    throw new RecordsFailedError(source, reported, total);
  for (const failure of reported) logFailure(source, failure, "reported as a batch item failure");
  return { batchItemFailures: reported.map((f) => ({ itemIdentifier: f.entry.itemId as string })) };
}
