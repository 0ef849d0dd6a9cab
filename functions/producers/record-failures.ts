/**
 * What a trigger does with the records that failed: report them to a batch event source
 * (ReportBatchItemFailures), throw so Lambda retries the event, or log and drop them.
 */
import { QueueError } from "../../core/index.ts";
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
  console.warn(`${source}: record ${entry.itemId ?? "(no id)"} ${action} (${stage}): ${kind(error)}`);
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
): void {
  const kept: RecordFailure<unknown>[] = [];
  for (const failure of failures) {
    if (onRecordError === "skip" && failure.stage === "map") logFailure(source, failure, "skipped");
    else kept.push(failure);
  }
  if (kept.length > 0) throw new RecordsFailedError(source, kept, total);
}

/**
 * The partial batch response naming each failed record. A failure without an identifier cannot be
 * reported, so the whole event is thrown back instead (safe: every id is derived).
 */
export function batchItemFailures(
  source: string,
  failures: RecordFailure<unknown>[],
  total: number,
): { batchItemFailures: { itemIdentifier: string }[] } {
  if (failures.some((f) => f.entry.itemId === undefined))
    throw new RecordsFailedError(source, failures, total);
  for (const failure of failures) logFailure(source, failure, "reported as a batch item failure");
  return { batchItemFailures: failures.map((f) => ({ itemIdentifier: f.entry.itemId as string })) };
}
