/**
 * One serverless invocation's worth of work: drain until the deadline, never starting a job that
 * could not finish before it, and — when the queue's next delayed job (a retry's backoff, a short
 * delay) is due soon enough to run in this invocation — wait for it rather than leave it to the
 * sweeper's next tick. Pure policy over Worker.drain, so any adapter (Lambda, a container) uses it.
 */

import type { HandedOverJob } from "../job/handed-over.ts";
import type { DrainSummary } from "./types.ts";
import type { Worker } from "./worker.ts";
import { trackWorkerInvocation } from "./worker-registry.ts";

export interface InvocationOptions {
  /** Epoch ms by which every job must be acked or handed back (the function's end less a margin). */
  deadline: number;
  /** Longest a job may run (ms): no job starts with less than this left before the deadline. */
  jobTimeoutMs: number;
  /** Wait for a delayed job due within this many ms (default 5000; 0 never). */
  waitForDelayedMs?: number;
  /** Start no earlier than this (ms): the invoker knew a delayed job is due then. */
  wakeAt?: number;
  /** The job the add that started this invocation leased to it: its first drain runs it at once. */
  handedOver?: HandedOverJob;
  /** Set by drainInvocation: each drain's last call may take the invocation out of the registry. */
  unregister?: () => string | undefined;
  signal?: AbortSignal;
  /**
   * Registers the invocation (its id, live until `until`) for the sweeper's count of running workers
   * while it drains, with the worker's batch size and concurrency for the sweeper's fan-out; the
   * registration goes out beside the first call, not before it.
   */
  register?: { id: string; until: number; onError(error: unknown): void };
}

/** What an invocation that stopped should do next. */
export type NextStep = "done" | "chain" | "too-short";

/**
 * Out of time after doing work: a fresh invocation goes on ("chain", within `maxChain`). One that could
 * not lease at all is "too-short" (its time is less than a job may take plus the margin): chaining
 * would only pass the problem on.
 */
export function nextStep(summary: DrainSummary, chain: number, maxChain: number): NextStep {
  if (summary.stoppedBecause !== "deadline") return "done";
  if (summary.leased === 0) return "too-short";
  return chain < maxChain ? "chain" : "done";
}

/** Two drains' counts added up; the later one says why and when. */
export function addSummaries(a: DrainSummary, b: DrainSummary): DrainSummary {
  return {
    ...b,
    leased: a.leased + b.leased,
    completed: a.completed + b.completed,
    failed: a.failed + b.failed,
    retried: a.retried + b.retried,
    delayed: a.delayed + b.delayed,
    handedBack: a.handedBack + b.handedBack,
    lostLeases: a.lostLeases + b.lostLeases,
  };
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function drainInvocation(
  worker: Pick<
    Worker,
    "drain" | "context" | "batchSize" | "concurrency" | "leaseMs" | "limited" | "events" | "maxLenEvents"
  >,
  options: InvocationOptions,
  clock: () => number = Date.now,
): Promise<DrainSummary> {
  const { register, handedOver } = options;
  if (!register) return await drainUntilDeadline(worker, options, clock);
  const { port, prefix, queueName } = worker.context;
  const settings = {
    batchSize: worker.batchSize,
    concurrency: worker.concurrency,
    leaseMs: worker.leaseMs,
    limited: worker.limited,
    events: worker.events,
    maxLenEvents: worker.maxLenEvents,
  };
  // A handed-over job's add registered this invocation until its lease ends: it registers itself
  // (until its own end) only if it is still running at half that time.
  const id = handedOver?.invocation ?? register.id;
  const selfRegister = () =>
    trackWorkerInvocation(port, prefix, queueName, id, register.until, settings).catch(register.onError);
  let registered: Promise<void> | undefined;
  // Its last call may take it out of the registry once the registration has landed (a removal that
  // overtook the registration would leave it registered until `until`).
  let landed = !!handedOver;
  // A handed-over invocation's own registration (its half-lease timer) may race its last ack: while
  // it is in flight no call carries `unregister`, and once it was sent the removal is always sent.
  let reRegistered = false;
  const registerNow = () => {
    landed = false;
    reRegistered = !!handedOver;
    registered = selfRegister().then(() => {
      landed = true;
    });
  };
  const timer = handedOver
    ? setTimeout(registerNow, Math.max(0, handedOver.lockedAt + handedOver.leaseMs / 2 - clock()))
    : undefined;
  if (!handedOver) registerNow();
  const unregister = () => (landed ? id : undefined);
  let summary: DrainSummary | undefined;
  try {
    summary = await drainUntilDeadline(worker, { ...options, unregister }, clock);
    return summary;
  } finally {
    clearTimeout(timer);
    await registered;
    if (!summary?.unregistered || reRegistered) await trackWorkerInvocation(port, prefix, queueName, id, 0);
  }
}

async function drainUntilDeadline(
  worker: Pick<Worker, "drain">,
  options: InvocationOptions,
  clock: () => number,
): Promise<DrainSummary> {
  const { deadline, jobTimeoutMs } = options;
  const waitForDelayedMs = options.waitForDelayedMs ?? 5000;
  const latestStart = deadline - jobTimeoutMs;
  if (
    !options.handedOver &&
    options.wakeAt !== undefined &&
    options.wakeAt > clock() &&
    options.wakeAt <= latestStart
  ) {
    await pause(options.wakeAt - clock());
  }
  let handed = options.handedOver ? [options.handedOver] : undefined;
  const drain = () => {
    const given = handed;
    handed = undefined;
    return worker.drain({
      deadline,
      reserveMs: jobTimeoutMs,
      signal: options.signal,
      ...(given ? { handedOver: given } : {}),
      ...(options.unregister ? { unregister: options.unregister } : {}),
    });
  };
  let summary = await drain();
  while (
    summary.stoppedBecause === "empty" &&
    summary.nextDueAt !== undefined &&
    summary.nextDueAt - clock() <= waitForDelayedMs &&
    summary.nextDueAt <= latestStart &&
    !options.signal?.aborted
  ) {
    await pause(summary.nextDueAt - clock());
    summary = addSummaries(summary, await drain());
  }
  return summary;
}
