/** One job's entry in a worker call's ack: what the Lua side reads (lua/includes/readAckEntries.lua). */
import type { KeepJobs } from "../types.ts";

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
  /** The job's group id (opts.group.id); "" or absent for none. */
  group?: string;
}

/** removeOnComplete / removeOnFail as the scripts take them: a count (-1 keep all), an age (s), a limit. */
export function keptBy(option: KeepJobs | undefined): { count: number; age: number; limit: number } {
  if (option === undefined || option === false) return { count: -1, age: 0, limit: 0 };
  if (option === true) return { count: 0, age: 0, limit: 0 };
  if (typeof option === "number") return { count: option, age: 0, limit: 0 };
  return { count: option.count ?? -1, age: option.age ?? 0, limit: option.limit ?? 0 };
}

/** What a job's parent does when the job fails for good: BullMQ's flag (fpof, cpof, idof, rdof) or "". */
export function parentPolicyOf(parent: object | undefined): string {
  const flags = (parent ?? {}) as Record<string, unknown>;
  for (const flag of ["fpof", "cpof", "idof", "rdof"]) if (flags[flag]) return flag;
  return "";
}
