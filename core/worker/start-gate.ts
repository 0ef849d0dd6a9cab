/**
 * When the pipeline may start its next attempt. A processor's synchronous work runs inside its start,
 * so CPU-bound processors started back to back would keep every timer and socket waiting — the lease
 * extender and the ack requests among them — until the whole batch is done. Once the starts since the
 * event loop's last turn have held it for `budgetMs`, the gate asks for a turn before the next start;
 * quick processors start back to back as before (their acks still group). It also keeps the pace of
 * recent attempts for the prefetch (call-plan.ts's holdingCapacity).
 */

/**
 * One whole turn of the event loop: a zero-delay timer, then an immediate. The timer alone is not
 * enough: timers fire by due time, and microtasks run after each one, so a start woken by a fresh
 * zero-delay timer would run before an older interval (the lease extender) that fell due during the
 * last attempt. The immediate runs after the timers phase and the poll for I/O.
 */
function nextTurn(callback: () => void): void {
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  setTimeout(() => (immediate ? immediate(callback) : setTimeout(callback, 0)), 0);
}

/** After a failed extension, the next one a start asks for waits this long (ms). */
const extendRetryMs = 500;

export class StartGate {
  /** A turn watcher is pending: no turn has passed since `windowStart`. */
  private armed = false;
  private windowStart = 0;
  private yielding = false;
  private extendFailedAt = Number.NEGATIVE_INFINITY;
  /** Moving average of attempt durations (ms), 0 before the first. */
  averageAttemptMs = 0;

  /** `wake` resumes the pipeline's loop once the turn has come. */
  constructor(
    private readonly wake: () => void,
    private readonly budgetMs = 10,
  ) {}

  /** True when the loop must let the event loop turn before the next start (the turn is asked for). */
  mustYield(now: number): boolean {
    if (!this.armed || now - this.windowStart < this.budgetMs) return false;
    if (!this.yielding) {
      this.yielding = true;
      nextTurn(() => {
        this.yielding = false;
        this.wake();
      });
    }
    return true;
  }

  /** A start happened: the first since the last turn opens the window the budget is counted in. */
  started(now: number): void {
    if (this.armed) return;
    this.armed = true;
    this.windowStart = now;
    nextTurn(() => {
      this.armed = false;
    });
  }

  /** Whether a start may ask for an extension now (not right after one failed). */
  mayExtend(now: number): boolean {
    return now - this.extendFailedAt >= extendRetryMs;
  }

  extendFailed(now: number): void {
    this.extendFailedAt = now;
  }

  attemptTook(ms: number): void {
    this.averageAttemptMs =
      this.averageAttemptMs === 0 ? ms : Math.round(this.averageAttemptMs * 0.8 + ms * 0.2);
  }
}

/** Sleeps `ms` (at least 1); `onWake` receives the function that ends the sleep early. */
export function wakeableSleep(ms: number, onWake: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, Math.max(1, ms));
    onWake(done);
  });
}
