/** How a job is shown over HTTP: BullMQ's field names, absent values as null (never left out). */
import type { Job, JobState } from "../../core/index.ts";

export interface JobView {
  id: string;
  name: string;
  state: JobState;
  progress: unknown;
  returnvalue: unknown;
  failedReason: string | null;
  attemptsMade: number;
  attemptsStarted: number;
  timestamp: number;
  processedOn: number | null;
  finishedOn: number | null;
  delay: number;
  priority: number;
  /** Left out of lists, whose pages would otherwise carry up to 1,000 payloads. */
  data?: unknown;
  opts: Record<string, unknown>;
}

export function jobView(job: Job, state: JobState, withData: boolean): JobView {
  return {
    id: job.id,
    name: job.name,
    state,
    progress: job.progress,
    returnvalue: job.returnvalue ?? null,
    failedReason: job.failedReason ?? null,
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    timestamp: job.timestamp,
    processedOn: job.processedOn ?? null,
    finishedOn: job.finishedOn ?? null,
    delay: job.delay,
    priority: job.priority,
    ...(withData ? { data: job.data } : {}),
    opts: job.opts,
  };
}

/**
 * Where a job the add just created stands, known without asking Redis: the add placed it by its own
 * delay and priority (a paused queue still keeps new jobs in wait, as BullMQ 6 does).
 */
export function stateOfCreatedJob(job: Job): JobState {
  if (job.delay > 0) return "delayed";
  if (job.priority > 0) return "prioritized";
  return "waiting";
}
