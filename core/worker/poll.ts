/**
 * Worker.run's loop: drains one after another until the signal fires; when a drain found nothing it
 * waits with a doubling backoff (never a blocking command), waking earlier when a delayed job or the
 * rate limit is due. A drain that fails is told and counts as an empty one.
 */
import { sleep } from "./signals.ts";
import type { DrainSummary } from "./types.ts";

export interface PollSettings {
  minMs: number;
  maxMs: number;
  clock: () => number;
  onError: (error: Error) => void;
}

export async function pollDrains(
  drain: (signal: AbortSignal) => Promise<DrainSummary>,
  signal: AbortSignal,
  settings: PollSettings,
): Promise<void> {
  let idleMs = settings.minMs;
  while (!signal.aborted) {
    let summary: DrainSummary;
    try {
      summary = await drain(signal);
    } catch (error) {
      if (signal.aborted) break;
      settings.onError(error as Error);
      summary = { stoppedBecause: "empty" } as DrainSummary;
    }
    if (signal.aborted) break;
    if (summary.leased > 0 && summary.stoppedBecause === "empty") {
      idleMs = settings.minMs;
      continue;
    }
    let wait = idleMs;
    if (summary.nextDueAt) wait = Math.min(wait, Math.max(summary.nextDueAt - settings.clock(), 0));
    idleMs = Math.min(idleMs * 2, settings.maxMs);
    await sleep(wait, signal);
  }
}
