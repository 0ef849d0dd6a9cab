/** One job a drain holds, and where its attempt stands (core/worker/held-jobs.ts keeps them). */
import type { ActiveJob } from "../job/active-job.ts";
import type { Stop } from "./attempt.ts";
import type { Extended } from "./calls.ts";
import type { Decision, Settled } from "./outcome.ts";

export interface Held {
  job: ActiveJob;
  /** When its lock was last set (ms): when the call that set it was sent. */
  lockedAt: number;
  /** When its attempt started (ms). */
  startedAt?: number;
  stop?: (stop: Stop) => void;
  settled?: Settled;
  decision?: Decision;
  lost?: boolean;
  /** Bytes its ack entry adds to a request. */
  bytes?: number;
}

/** What a lease extension calls: the extension itself, then per job found lost or cancelled. */
export interface LeaseHandlers {
  extend(jobs: ActiveJob[]): Promise<Extended>;
  lost(held: Held): void;
  /** `acking`: the job's ack is in flight (its decision is sent and stays). */
  cancelled(held: Held, reason: string, acking: boolean): void;
}
