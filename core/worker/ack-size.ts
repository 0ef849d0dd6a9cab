/**
 * Keeping every worker call under the request limit (Upstash: 10 MB on free and pay-as-you-go, taken
 * as 10,000,000 bytes). Each ack entry's size is what its strings add to the JSON body; a call carries
 * entries up to a budget comfortably under the limit and leaves the rest to the next call, so one
 * large result never sinks its siblings. Only an entry too large to fit any request fails, alone.
 */
import { noDeadLetter } from "../dead-letter/dead-letter.ts";
import { UnrecoverableError } from "../errors.ts";
import type { AckEntry } from "../job/ack-entry.ts";
import { requestLimitBytes } from "../redis/redis-port.ts";
import type { Held } from "./held.ts";
import type { Decision, Settled } from "./outcome.ts";

export const defaultMaxRequestBytes = requestLimitBytes;

/** Room kept in every request for the command, the keys and the fixed arguments. */
const reservedBytes = 256 * 1024;

const encoder = new TextEncoder();

/** Bytes a string takes inside the JSON body (quotes and escapes included). */
export function jsonBytes(text: string): number {
  // Plain ASCII without escapes is the common case: its JSON size is its length plus the quotes.
  if (/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(text)) return text.length + 2;
  return encoder.encode(JSON.stringify(text)).length;
}

/** What one entry adds to a request body. */
export function entryBytes(entry: AckEntry): number {
  let total = 0;
  for (const value of Object.values(entry)) {
    total += typeof value === "string" ? jsonBytes(value) + 1 : String(value).length + 3;
  }
  return total;
}

/** The most one entry may take: the limit less the room kept for everything else. */
export function maxEntryBytes(maxRequestBytes: number): number {
  return maxRequestBytes - reservedBytes;
}

/** Why an entry cannot be sent at all (its size and the limit), or undefined when it fits. */
export function oversized(
  jobId: string,
  entry: AckEntry,
  bytes: number,
  maxRequestBytes: number,
): string | undefined {
  if (bytes <= maxEntryBytes(maxRequestBytes)) return undefined;
  const what = entry.outcome === "completed" ? "return value" : "failure";
  return `the ${what} of job "${jobId}" takes ${bytes} bytes, over the ${maxRequestBytes}-byte request limit`;
}

/** A call's budget for entries: nine tenths of what fits, so requests stay comfortably under the limit. */
export function entryBudget(maxRequestBytes: number): number {
  return Math.floor(maxEntryBytes(maxRequestBytes) * 0.9);
}

/**
 * The first entries (in order) that fit the budget; at least one, which the caller has already
 * checked against maxEntryBytes.
 */
export function takeWithinBudget<T>(items: T[], sizeOf: (item: T) => number, budget: number): T[] {
  const taken: T[] = [];
  let used = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (taken.length > 0 && used + size > budget) break;
    taken.push(item);
    used += size;
  }
  return taken;
}

/**
 * A decision whose entry fits a request, with its size: one too large becomes the failure `fail`
 * makes of the reason (its stack dropped); if even that is too large — a dead letter carries the
 * job's data and earlier traces — the job fails without its dead letter.
 */
export function fitDecision(
  jobId: string,
  decision: Decision,
  maxRequestBytes: number,
  fail: (reason: string) => Decision,
): { decision: Decision; bytes: number } {
  if (!decision.entry) return { decision, bytes: 0 };
  const bytes = entryBytes(decision.entry);
  const reason = oversized(jobId, decision.entry, bytes, maxRequestBytes);
  if (!reason) return { decision, bytes };
  const failed = fail(reason);
  const entry = failed.entry;
  if (!entry) return { decision: failed, bytes: 0 };
  entry.stacktrace = "[]";
  if (oversized(jobId, entry, entryBytes(entry), maxRequestBytes)) {
    Object.assign(entry, noDeadLetter, { value: `${reason} (too large for a dead letter too)` });
  }
  return { decision: failed, bytes: entryBytes(entry) };
}

/**
 * A held job's decision fitted to the request limit (fitDecision), and the bytes its entry adds: a
 * result or failure too large for any request fails its own job, with its size and the limit.
 */
export function fitHeld(held: Held, maxRequestBytes: number, decide: (settled: Settled) => Decision): void {
  if (!held.decision) return;
  const fitted = fitDecision(held.job.id, held.decision, maxRequestBytes, (reason) =>
    decide({ kind: "threw", error: new UnrecoverableError(reason) }),
  );
  held.decision = fitted.decision;
  held.bytes = fitted.bytes;
}
