/**
 * What a Worker settles once, when it is made, and every drain's Pipeline reads: where the queue is,
 * the pipeline's settings, the outcome rules' settings, what runs an attempt, the worker's events, a
 * source of call tokens and the decided jobs a failed drain carried over. The few functions below are
 * what the pipeline does with it — decide, report, prepare, extend — called directly.
 */

import { LeaseLostError } from "../errors.ts";
import { ActiveJob } from "../job/active-job.ts";
import type { HandedOverJob } from "../job/handed-over.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { withNextIterations } from "../schedulers/scheduler-iterations.ts";
import type { EventsLevel } from "../types.ts";
import { fitHeld } from "./ack-size.ts";
import type { AttemptOptions } from "./attempt.ts";
import { ackDone, extendBatch } from "./calls.ts";
import type { Held, LeaseHandlers } from "./held.ts";
import {
  type Decision,
  decide,
  type OutcomeSettings,
  refusedCompletion,
  refusesCompletion,
  type Settled,
} from "./outcome.ts";
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
  /** group.concurrency, 0 for none. */
  groupConcurrency: number;
  /** group.limit's max and duration (ms), 0 for none. */
  groupLimitMax: number;
  groupLimitDuration: number;
  workerName: string;
  maxLenEvents: number;
  events: EventsLevel;
}

export type Emit = <E extends keyof WorkerEvents>(event: E, ...args: Parameters<WorkerEvents[E]>) => void;

export interface WorkerSetup {
  readonly context: QueueContext;
  readonly settings: PipelineSettings;
  /** The outcome rules' settings but the clock, which each decision reads. */
  readonly outcome: Omit<OutcomeSettings, "now">;
  /** The attempt's options but the drain's deadline. */
  readonly attempt: Omit<AttemptOptions, "deadline">;
  readonly emit: Emit;
  /** A fresh token for each worker call: its jobs' lock value and its replay guard's name. */
  nextToken(): string;
  /** Decided jobs a failed drain could not ack: the next drain acks them first (taken by splice). */
  readonly carried: Held[];
}

function outcomeNow(setup: WorkerSetup): OutcomeSettings {
  return { ...setup.outcome, now: setup.context.clock() };
}

/** The ack entry and report for an attempt's end. The rules never throw by design; if they did, the job goes back. */
export function decideOutcome(setup: WorkerSetup, job: ActiveJob, settled: Settled): Decision {
  try {
    return decide(job, settled, outcomeNow(setup));
  } catch (error) {
    setup.emit("error", error as Error);
    return decide(job, { kind: "handed-back" }, outcomeNow(setup));
  }
}

/** A drain's summary before its first job. */
export function emptySummary(): DrainSummary {
  return {
    leased: 0,
    completed: 0,
    failed: 0,
    retried: 0,
    delayed: 0,
    handedBack: 0,
    lostLeases: 0,
    stoppedBecause: "empty",
  };
}

/** Counts a settled job in the drain's summary and emits the worker's event for it, as BullMQ does. */
export function reportOutcome(emit: Emit, job: ActiveJob, decision: Decision, summary: DrainSummary): void {
  // As BullMQ's listeners see it: the finished attempt counts (attemptsMade 1 after a first success).
  const made = Number(decision.entry?.attemptsMade);
  if (decision.result !== "handed-back" && decision.result !== "delayed" && made > job.attemptsMade)
    job.attemptsMade = made;
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

/**
 * An attempt's end decided into its held job: the decision, fitted to the request limit (a result or
 * failure too large for any request fails its own job, with its size and the limit), and its bytes.
 */
export function decideHeld(setup: WorkerSetup, held: Held, settled: Settled): void {
  held.settled = settled;
  held.decision = decideOutcome(setup, held.job, settled);
  fitHeld(held, setup.settings.maxRequestBytes, (failure) => decideOutcome(setup, held.job, failure));
}

/** A held job's lease is lost (an extension or its ack found another owner or none): counted and told. */
export function reportLost(setup: WorkerSetup, held: Held, what: string, summary: DrainSummary): void {
  summary.lostLeases += 1;
  const { id, queueName } = held.job;
  setup.emit("error", new LeaseLostError(`${what} on job "${id}" in queue "${queueName}"`));
}

/**
 * What the ack answered for one job: 1 done (reported), a completion refused because of the job's
 * children (-4 pending, -9 failed: decided again, and true — ack it again), anything else a lost lease.
 */
export function ackAnswered(setup: WorkerSetup, held: Held, code: number, summary: DrainSummary): boolean {
  const decision = held.decision as Decision;
  if (refusesCompletion(code) && decision.result === "completed") {
    held.decision = refusedCompletion(held.job, code, outcomeNow(setup));
    fitHeld(held, setup.settings.maxRequestBytes, (failure) => decideOutcome(setup, held.job, failure));
    return true;
  }
  if (code === ackDone) reportOutcome(setup.emit, held.job, decision, summary);
  else reportLost(setup, held, `ack refused (code ${code})`, summary);
  return false;
}

/** Leased jobs made ready to run: progress events wired, a scheduler's job given its next iteration. */
export async function prepareLeased(setup: WorkerSetup, jobs: ActiveJob[]): Promise<ActiveJob[]> {
  const { emit, settings } = setup;
  for (const job of jobs) {
    job.hooks = { onProgress: (j, progress) => emit("progress", j, progress), events: settings.events };
  }
  return await withNextIterations(setup.context, jobs, settings.maxLenEvents, (e) => emit("error", e));
}

/** A drain's lease extension, and what it does with the jobs found lost and cancelled. */
export function leaseHandlers(setup: WorkerSetup, summary: DrainSummary): LeaseHandlers {
  return {
    extend: (jobs) => extendBatch(setup.context, jobs, setup.settings.leaseMs),
    lost: (held) => reportLost(setup, held, "lease lost", summary),
    cancelled: (held, reason, acking) => cancelHeld(setup, held, reason, acking),
  };
}

/**
 * A cancel reached a held job (queue.cancelJob, read by a lease extension): its signal fires, and an
 * attempt that already ended failing (not yet acked) is decided again, its failure now final.
 */
export function cancelHeld(setup: WorkerSetup, held: Held, reason: string, acking: boolean): void {
  if (held.job.cancelReason !== undefined) return;
  held.job.cancelled(reason);
  if (!acking && held.settled?.kind === "threw") decideHeld(setup, held, held.settled);
}

/**
 * The jobs an add leased to a drain before it began (core/job/handed-over.ts), held as if its own call
 * had leased them: each lock counted from when its lease ends less this worker's lease, so a shorter
 * handed-over lease is extended sooner. Nothing is known of the rest of the queue: the drain's first
 * call acks them, and what it peeks decides what follows.
 */
export async function heldFromHandoff(setup: WorkerSetup, handed: HandedOverJob[]): Promise<Held[]> {
  const byId = new Map(handed.map((given) => [given.id, given]));
  const jobs = handed.map((given) => ActiveJob.fromLease(setup.context, given.id, given.fields, given.token));
  return (await prepareLeased(setup, jobs)).map((job) => {
    const given = byId.get(job.id) as HandedOverJob;
    return { job, lockedAt: given.lockedAt + given.leaseMs - setup.settings.leaseMs };
  });
}
