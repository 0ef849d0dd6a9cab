/**
 * The sweeper loop's decisions as plain functions of what a sweep read and the clock: how many worker
 * invocations to start, when the next pass is due, how long to sleep, and how long an invocation may
 * loop and hold the lock. Unit-tested without Redis (test/sweeper/sweep-decisions.test.ts).
 */
import type { QueueSweep } from "./sweep.ts";

/** The fan-out's batch size when neither a worker nor the configuration gave one. */
export const defaultFanOutBatchSize = 10;

/**
 * The batch size the fan-out divides a backlog by: the one the queue's workers registered, else the
 * sweeper's configured one, else 10. A worker at 50 beside a configured 10 would otherwise start five
 * times too many invocations.
 */
export function fanOutBatchSize(sweep: QueueSweep, configured?: number): number {
  return sweep.workerSettings?.batchSize ?? configured ?? defaultFanOutBatchSize;
}

/** Most worker invocations of one queue at once when its configuration gives no maxWorkers. */
export const defaultMaxWorkers = 10;

/** How many worker invocations to start: enough for the backlog, minus those running, capped. */
export function workersToStart(
  sweep: QueueSweep,
  batchSize: number,
  maxWorkers: number,
  recentlyStarted = 0,
): number {
  if (sweep.paused) return 0;
  const backlog = sweep.waiting + sweep.prioritized;
  if (backlog === 0) return 0;
  const running = sweep.workers + recentlyStarted;
  const wanted = Math.ceil(backlog / Math.max(batchSize, 1)) - running;
  return Math.max(0, Math.min(wanted, maxWorkers - running));
}

/** The earliest time any queue needs the sweeper again, if any. */
export function nextDueAt(sweeps: readonly QueueSweep[]): number | undefined {
  let next: number | undefined;
  for (const s of sweeps) {
    for (const t of [s.nextDelayedAt, s.nextStalledCheckAt, s.nextSchedulerAt]) {
      if (t !== undefined && (next === undefined || t < next)) next = t;
    }
  }
  return next;
}

/**
 * How long the sweeper should sleep before its next pass, or undefined to stop: it stops when nothing
 * is due before it must end (shortly before the next tick, which will sweep anyway). Passes are at
 * least `minGapMs` apart after the previous one (`lastPassAt`), so jobs due a few ms apart are
 * promoted together rather than one pass each (each pass has a fixed cost).
 */
export function sleepBeforeNextPass(
  due: number | undefined,
  now: number,
  endAt: number,
  lastPassAt = now,
  minGapMs = 0,
): number | undefined {
  if (due === undefined || due >= endAt) return undefined;
  return Math.max(0, due - now, lastPassAt + minGapMs - now);
}

/**
 * When one invocation's loop must end (`endAt`: the margin before the next tick or its own end,
 * whichever is first) and until when its lock lives (`lockUntil`: half a margin later, so the lock
 * lapses before the next tick even if the invocation dies, and a duplicated tick meanwhile does nothing).
 */
export function passWindow(
  startedAt: number,
  remainingMs: number,
  tickMs: number,
  marginMs: number,
): { endAt: number; lockUntil: number } {
  const window = Math.min(remainingMs, tickMs);
  return { endAt: startedAt + window - marginMs, lockUntil: startedAt + window - marginMs / 2 };
}
