/**
 * The report pattern: a report's time window is decided once — when the job is enqueued, or for a
 * scheduler's iteration from its planned time — and carried with the job, so a retry or a late run
 * reports on the same window, never on "the last 24 hours before whenever the worker ran it".
 */
const dayMs = 24 * 60 * 60 * 1000;

export interface ReportWindow {
  /** Epoch ms, inclusive. */
  windowStart: number;
  /** Epoch ms, exclusive. */
  windowEnd: number;
}

/** The UTC day before the one `at` falls in: the daily report made at `at` covers it. */
export function dailyWindow(at: number): ReportWindow {
  const windowEnd = Math.floor(at / dayMs) * dayMs;
  return { windowStart: windowEnd - dayMs, windowEnd };
}

/**
 * The window of a report job: the one carried in its data (enqueued by hand), else the one of the
 * scheduler iteration's planned time (`job.scheduledAt`), which a retry keeps.
 */
export function windowOf(job: {
  data: Partial<ReportWindow>;
  scheduledAt?: number | undefined;
  timestamp: number;
}): ReportWindow {
  const { windowStart, windowEnd } = job.data;
  if (typeof windowStart === "number" && typeof windowEnd === "number") return { windowStart, windowEnd };
  return dailyWindow(job.scheduledAt ?? job.timestamp);
}
