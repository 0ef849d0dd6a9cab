/** How a job is shown over HTTP: BullMQ's field names, absent values as null (never left out). */
import type * as z from "zod/mini";
import type { Job, JobState } from "../../core/index.ts";
import type { jobSummarySchema, jobViewSchema } from "./job-schemas.ts";

/** A job as `GET /queues/:queue/jobs/:id` shows it (the `Job` schema of /openapi.json). */
export type JobView = z.output<typeof jobViewSchema>;
/** A job in a list: everything but its data, which would make a page of 1,000 too heavy. */
export type JobSummary = z.output<typeof jobSummarySchema>;

export function jobSummary(job: Job, state: JobState): JobSummary {
  return {
    id: job.id,
    name: job.name,
    state,
    progress: (job.progress ?? null) as JobSummary["progress"],
    returnvalue: (job.returnvalue ?? null) as JobSummary["returnvalue"],
    failedReason: job.failedReason ?? null,
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    timestamp: job.timestamp,
    processedOn: job.processedOn ?? null,
    finishedOn: job.finishedOn ?? null,
    delay: job.delay,
    priority: job.priority,
    // As stored: BullMQ's own keys included, which the schema lets through.
    opts: job.opts as JobSummary["opts"],
  };
}

export function jobView(job: Job, state: JobState): JobView {
  return { ...jobSummary(job, state), data: (job.data ?? null) as JobView["data"] };
}

/**
 * Where a job the add just created stands, known without asking Redis: the add placed it by its own
 * delay, priority and group (a paused queue still keeps new jobs in wait, as BullMQ 6 does).
 */
export function stateOfCreatedJob(job: Job): JobState {
  if (job.delay > 0) return "delayed";
  // A grouped job waits in its group, by priority there too (docs/groups.md).
  if (job.priority > 0 && !job.opts.group) return "prioritized";
  return "waiting";
}
