/** One job's entry in a worker call's ack: what the Lua side reads (lua/includes/readAckEntries.lua). */

export type AckOutcome = "completed" | "failed" | "delayed" | "waiting" | "returned";

/** One job's entry in the ack call (the ackJobs script's ARGV group). */
export interface AckEntry {
  id: string;
  token: string;
  outcome: AckOutcome;
  value: string;
  stacktrace: string;
  /** The new attemptsMade, "" to leave it. */
  attemptsMade: number | "";
  due: number;
  priority: number;
  lifo: string;
  keepCount: number;
  keepAge: number;
  keepLimit: number;
  attempts: number;
  parentKey: string;
  parentPrefix: string;
  parentPolicy: string;
  dedupId: string;
  deferred: string;
  /** A final failure's dead letter (core/dead-letter/dead-letter.ts): the dead-letter queue's key prefix, or "". */
  deadLetter: string;
  deadLetterId: string;
  deadLetterName: string;
  deadLetterData: string;
  deadLetterOpts: string;
}
