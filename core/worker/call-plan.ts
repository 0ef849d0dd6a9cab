/**
 * When a worker makes its next call and what it asks for: pure decisions over the pipeline's counts,
 * unit-tested without Redis.
 */

import type { AckEntry } from "../job/ack-entry.ts";
import type { CycleRequest } from "./calls.ts";
import type { PipelineSettings } from "./worker-setup.ts";

export interface PipelineCounts {
  /** Leased, waiting for a slot. */
  queued: number;
  running: number;
  /** Finished, waiting for their ack. */
  done: number;
  /** How long the oldest done job has waited (ms). */
  oldestDoneWaitedMs: number;
  /** How long attempts have taken lately (ms; 0 before the first has finished). */
  averageAttemptMs?: number;
}

/**
 * How many jobs the worker may hold: max(concurrency, batchSize), but no more than start within
 * half a lease at the pace attempts have taken so far — long jobs prefetched by the dozen would wait
 * for a slot past their lease.
 */
export function holdingCapacity(settings: PipelineSettings, averageAttemptMs = 0): number {
  const configured = Math.max(settings.concurrency, settings.batchSize);
  if (averageAttemptMs <= 0) return configured;
  const waiting = Math.floor((settings.concurrency * settings.leaseMs) / 2 / averageAttemptMs);
  return Math.max(settings.concurrency, Math.min(configured, settings.concurrency + waiting));
}

export interface CallPlan {
  /** Jobs to lease. */
  count: number;
  /** Ack the done jobs in this call. */
  ack: boolean;
}

/**
 * The worker holds at most max(concurrency, batchSize) jobs (fewer when attempts are long, see
 * holdingCapacity): batchSize above concurrency is how many leased jobs wait for a slot, so a freed slot starts the next one without a round trip. A call goes
 * out when a slot would otherwise idle, when enough jobs are done (or the first has waited long
 * enough), when half a batch can be leased, or to hand back what a stopping worker holds.
 */
export function planCall(
  settings: PipelineSettings,
  counts: PipelineCounts,
  leasing: boolean,
  stopping: boolean,
): CallPlan | undefined {
  const capacity = holdingCapacity(settings, counts.averageAttemptMs);
  const holding = counts.queued + counts.running;
  const count = leasing ? Math.max(0, Math.min(settings.batchSize, capacity - holding)) : 0;
  const idle = counts.running < settings.concurrency && counts.queued === 0;
  const ack =
    counts.done > 0 &&
    (idle ||
      stopping ||
      counts.done >= settings.ackGroupSize ||
      counts.oldestDoneWaitedMs >= settings.ackWaitMs);
  const lease = count > 0 && (idle || count >= Math.ceil(settings.batchSize / 2));
  if (!ack && !lease) return undefined;
  return { count, ack };
}

/** The prune an entry owes (removeOnComplete/removeOnFail by count or age), as the script reads it. */
export function pruneOf(entry: AckEntry): string | undefined {
  if (entry.keepCount <= 0 && entry.keepAge <= 0) return undefined;
  if (entry.outcome !== "completed" && entry.outcome !== "failed") return undefined;
  return `${entry.outcome}|${entry.keepCount}|${entry.keepAge}|${entry.keepLimit}`;
}

/**
 * The prunes acked entries owe, sent with an open call (ackPromoteAndLease): at least every
 * `everyCalls` calls, and with a drain's last ack, so removeOnComplete/removeOnFail counts hold when
 * it ends.
 */
export class PruneSchedule {
  private readonly pending = new Set<string>();
  private callsSince = 0;

  note(entries: readonly (AckEntry | undefined)[]): void {
    for (const entry of entries) {
      const prune = entry && pruneOf(entry);
      if (prune) this.pending.add(prune);
    }
  }

  /** An open call is owed now. */
  due(lastAck: boolean, everyCalls: number): boolean {
    return this.pending.size > 0 && (lastAck || this.callsSince >= everyCalls);
  }

  /** The prunes as the script reads them: "target|count|age|limit;…". */
  text(): string {
    return [...this.pending].join(";");
  }

  /** A call went out; an open one carried every pending prune. */
  sent(open: boolean): void {
    if (!open) {
      this.callsSince += 1;
      return;
    }
    this.pending.clear();
    this.callsSince = 0;
  }
}

/**
 * Entries in the order a call sends them: handed-back jobs last and in reverse, so that each pushed
 * to the front of the line leaves the first-leased one foremost.
 */
export function ackOrder<T>(items: T[], entryOf: (item: T) => AckEntry | undefined): T[] {
  const returned = (item: T) => entryOf(item)?.outcome === "returned";
  return [...items.filter((item) => !returned(item)), ...items.filter(returned).reverse()];
}

/** A call's request: what the pipeline decided, plus the worker's settings. */
export function cycleRequest(
  settings: PipelineSettings,
  call: Pick<CycleRequest, "token" | "count" | "candidates" | "open" | "prunes" | "entries" | "unregister">,
): CycleRequest {
  return {
    ...call,
    leaseMs: settings.leaseMs,
    peek: settings.batchSize * settings.maxCallsInFlight,
    limiterMax: settings.limiterMax,
    limiterDuration: settings.limiterDuration,
    groupConcurrency: settings.groupConcurrency,
    groupLimitMax: settings.groupLimitMax,
    groupLimitDuration: settings.groupLimitDuration,
    workerName: settings.workerName,
    maxLenEvents: settings.maxLenEvents,
    events: settings.events,
  };
}
