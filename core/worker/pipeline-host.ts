/**
 * What a Pipeline needs from its Worker: where the queue is, the settings, the outcome rules, the
 * worker's events and summary, and the two side calls (scheduler iterations, lease extension).
 */

import type { ActiveJob } from "../job/active-job.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import type { EventsLevel } from "../types.ts";
import type { AttemptOptions } from "./attempt.ts";
import type { Held } from "./held.ts";
import type { Decision, Settled } from "./outcome.ts";
import type { DrainSummary, WorkerEvents } from "./types.ts";

export interface PipelineSettings {
  batchSize: number;
  concurrency: number;
  leaseMs: number;
  jobTimeoutMs?: number;
  /** Flush the ack group once this many jobs are done… */
  ackGroupSize: number;
  /** …or once the first of them has waited this long (ms). */
  ackWaitMs: number;
  /** Prune finished sets (removeOnComplete/Fail by count or age) at least every this many calls. */
  pruneEveryCalls: number;
  maxRequestBytes: number;
  /** Worker calls (ack + lease) in flight at once. */
  maxCallsInFlight: number;
  limiterMax: number;
  limiterDuration: number;
  workerName: string;
  maxLenEvents: number;
  events: EventsLevel;
}

export interface PipelineHost {
  readonly location: QueueContext;
  readonly settings: PipelineSettings;
  clock(): number;
  emit<E extends keyof WorkerEvents>(event: E, ...args: Parameters<WorkerEvents[E]>): void;
  nextToken(): string;
  attemptOptions(deadline: number): AttemptOptions;
  decide(job: ActiveJob, settled: Settled): Decision;
  /** A completion the ack refused because of the job's children (-4 pending, -9 failed). */
  refused(job: ActiveJob, code: number): Decision;
  report(job: ActiveJob, decision: Decision, summary: DrainSummary): void;
  /** Leased jobs made ready to run (a scheduler's job gets its next iteration). */
  prepare(jobs: ActiveJob[]): Promise<ActiveJob[]>;
  /** Extends the jobs' leases; resolves to the ids whose lease is lost. */
  extend(jobs: ActiveJob[]): Promise<Set<string>>;
  /** Keeps decided jobs a failed drain could not ack, for the next drain. */
  carry(held: Held[]): void;
  /** The jobs an earlier drain carried (taken: the next call gets none). */
  takeCarried(): Held[];
}

/** Counts a settled job in the drain's summary and emits the worker's event for it, as BullMQ does. */
export function reportOutcome(
  emit: PipelineHost["emit"],
  job: ActiveJob,
  decision: Decision,
  summary: DrainSummary,
): void {
  switch (decision.result) {
    case "completed":
      summary.completed += 1;
      job.returnvalue = decision.returnValue;
      emit("completed", job, decision.returnValue, "active");
      break;
    case "failed":
    case "retried":
      summary[decision.result] += 1;
      emit("failed", job, decision.error as Error, "active");
      break;
    case "delayed":
      summary.delayed += 1;
      break;
    case "handed-back":
      summary.handedBack += 1;
      break;
    case "waiting-children":
      break;
  }
}
