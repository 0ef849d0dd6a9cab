/**
 * The maintenance half of `Queue` (its base class, to keep queue.ts small): BullMQ's clean, drain,
 * obliterate, retryJobs, promoteJobs, rate limits, global concurrency, deduplication windows and
 * metrics, each a thin call into maintenance.ts or queue-settings.ts.
 */

import type { QueueContext } from "../redis/queue-context.ts";
import * as maintenance from "./maintenance.ts";
import * as settings from "./queue-settings.ts";

export class QueueMaintenance {
  /** @internal Where the queue's jobs live (set by Queue's constructor). */
  declare protected location: QueueContext;

  /**
   * Deletes the jobs of one state whose time (finishedOn, else processedOn, else timestamp) is at
   * least `grace` ms old, at most `limit` (0 for all), in bounded steps, and returns their ids; a
   * scheduler's current iteration and active jobs a worker holds stay. One `cleaned {count}` event.
   *
   * @example
   * await queue.clean(24 * 3600_000, 0, "completed"); // completed more than a day ago
   */
  clean(grace: number, limit: number, state: maintenance.CleanState = "completed"): Promise<string[]> {
    return maintenance.clean(this.location, grace, limit, state);
  }

  /**
   * Deletes every waiting and prioritized job (and delayed ones with `delayed`), but a job
   * scheduler's current iteration; no events. Returns how many went.
   */
  drain(delayed = false): Promise<number> {
    return maintenance.drain(this.location, delayed);
  }

  /**
   * Pauses the queue and deletes it with all its jobs and keys. Refused (QueueStateError) while jobs
   * are active unless `force`.
   */
  obliterate(opts?: maintenance.ObliterateOptions): Promise<void> {
    return maintenance.obliterate(this.location, opts);
  }

  /** Retries every failed (or completed) job, back to wait; returns how many. */
  retryJobs(opts?: maintenance.RetryJobsOptions): Promise<number> {
    return maintenance.retryJobs(this.location, opts);
  }

  /** Makes every delayed job ready now; returns how many. */
  promoteJobs(opts?: maintenance.PromoteJobsOptions): Promise<number> {
    return maintenance.promoteJobs(this.location, opts);
  }

  /** Holds every worker of the queue back for `ms` ms (BullMQ's manual rate limit). */
  rateLimit(ms: number): Promise<void> {
    return settings.rateLimit(this.location, ms);
  }

  /** The ms the rate limit still holds (see BullMQ's `getRateLimitTtl`). */
  getRateLimitTtl(maxJobs?: number): Promise<number> {
    return settings.getRateLimitTtl(this.location, maxJobs);
  }

  setGlobalConcurrency(concurrency: number): Promise<void> {
    return settings.setGlobalConcurrency(this.location, concurrency);
  }

  removeGlobalConcurrency(): Promise<void> {
    return settings.removeGlobalConcurrency(this.location);
  }

  getGlobalConcurrency(): Promise<number | null> {
    return settings.getGlobalConcurrency(this.location);
  }

  setGlobalRateLimit(max: number, duration: number): Promise<void> {
    return settings.setGlobalRateLimit(this.location, max, duration);
  }

  removeGlobalRateLimit(): Promise<void> {
    return settings.removeGlobalRateLimit(this.location);
  }

  getGlobalRateLimit(): Promise<{ max: number; duration: number } | null> {
    return settings.getGlobalRateLimit(this.location);
  }

  /** The id of the job that owns a deduplication window, or null. */
  getDeduplicationJobId(id: string): Promise<string | null> {
    return settings.getDeduplicationJobId(this.location, id);
  }

  /** Ends a deduplication window, whichever job owns it; 1 when there was one. */
  removeDeduplicationKey(id: string): Promise<number> {
    return settings.removeDeduplicationKey(this.location, id);
  }

  /** What BullMQ workers with `metrics` on recorded for completed or failed jobs. */
  getMetrics(type: "completed" | "failed", start = 0, end = -1): Promise<settings.Metrics> {
    return settings.getMetrics(this.location, type, start, end);
  }
}
