/**
 * The jobs one drain holds, by where they are: leased and waiting for a slot, running, finished and
 * waiting for their ack, or in the ack call in flight. Every one of them has a live lock, kept alive
 * here until its ack lands; a job whose lock is lost is dropped and its attempt stopped.
 */
import { takeWithinBudget } from "./ack-size.ts";
import { ackOrder } from "./call-plan.ts";
import type { Held, LeaseHandlers } from "./held.ts";

export class HeldJobs {
  readonly queued: Held[] = [];
  readonly running = new Set<Held>();
  readonly done: Held[] = [];
  readonly acking = new Set<Held>();
  private extendCalls = 0;

  /** An extension call is in flight. */
  get extending(): boolean {
    return this.extendCalls > 0;
  }

  get count(): number {
    return this.queued.length + this.running.size + this.done.length + this.acking.size;
  }

  /** The age (ms) of the oldest lock still held and not being acked; 0 when none. */
  oldestLock(now: number): number {
    let oldest = 0;
    for (const list of [this.queued, this.running, this.done]) {
      for (const held of list) if (!held.lost) oldest = Math.max(oldest, now - held.lockedAt);
    }
    return oldest;
  }

  /** Moves the done jobs the next call acks (within `budget` bytes, in ack order) to `acking`. */
  takeForAck(budget: number): Held[] {
    const picked = takeWithinBudget(this.done, (held) => held.bytes ?? 0, budget);
    this.done.splice(0, picked.length);
    const ordered = ackOrder(picked, (held) => held.decision?.entry);
    for (const held of ordered) this.acking.add(held);
    return ordered;
  }

  /**
   * Extends, in one call, every lock older than a third of the lease; a job reported lost that is
   * still held (not acked meanwhile, which also drops its lock) goes to `handlers.lost`, one a cancel
   * reached (still extended) to `handlers.cancelled`.
   */
  async extend(now: number, leaseMs: number, handlers: LeaseHandlers): Promise<void> {
    if (this.extending) return;
    const all = [...this.queued, ...this.running, ...this.done, ...this.acking];
    const due = all.filter((held) => !held.lost && now - held.lockedAt >= leaseMs / 3);
    if (due.length === 0) return;
    this.extendCalls += 1;
    try {
      const { lost, cancelled } = await handlers.extend(due.map((held) => held.job));
      for (const held of due) {
        const reason = cancelled.get(held.job.id);
        if (reason !== undefined) handlers.cancelled(held, reason, this.acking.has(held));
        if (!lost.has(held.job.id)) held.lockedAt = now;
        else if (this.stillHeld(held)) this.drop(held);
        else continue;
        if (held.lost) handlers.lost(held);
      }
    } finally {
      this.extendCalls -= 1;
    }
  }

  private stillHeld(held: Held): boolean {
    return this.queued.includes(held) || this.running.has(held) || this.done.includes(held);
  }

  /** Forgets a job whose lease is lost: its result is never written, its attempt is stopped. */
  private drop(held: Held): void {
    held.lost = true;
    const queuedAt = this.queued.indexOf(held);
    if (queuedAt >= 0) this.queued.splice(queuedAt, 1);
    const doneAt = this.done.indexOf(held);
    if (doneAt >= 0) this.done.splice(doneAt, 1);
    held.stop?.({ kind: "lost" });
  }
}
