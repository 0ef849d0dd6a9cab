/**
 * Reading and managing jobs: `GET /queues/:queue/jobs/:id` (with `?wait=<ms>`: once it finishes), the
 * paged list, and the admin routes `DELETE /queues/:queue/jobs/:id` and
 * `POST /queues/:queue/jobs/:id/retry`.
 */
import type { Hono } from "hono";
import {
  type Job,
  JobNotInStateError,
  type JobState,
  type JobType,
  type RetryOptions,
} from "../../core/index.ts";
import { errorCodes, HttpError, invalid } from "./http-errors.ts";
import { jobView } from "./job-view.ts";
import { untilFinished, waitDeadline, waitParam } from "./job-wait.ts";
import { adminOnly } from "./middleware.ts";
import type { AppEnv, QueueAccess } from "./queue-access.ts";
import { readJsonBody } from "./request-body.ts";

/** The types a list may ask for (`wait` and `paused` list what getState calls waiting). */
export const listTypes: readonly JobType[] = [
  "waiting",
  "wait",
  "paused",
  "active",
  "prioritized",
  "delayed",
  "completed",
  "failed",
  "waiting-children",
];

/** Most jobs on one page. */
export const maxPageSize = 1000;
const defaultPageSize = 20;

function indexParam(text: string | undefined, field: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d{1,15}$/.test(text)) throw invalid(field, `${field} must be a non-negative integer`);
  return Number(text);
}

function listQuery(query: (name: string) => string | undefined) {
  const state = query("state");
  if (state === undefined || !(listTypes as readonly string[]).includes(state))
    throw invalid("state", `state must be one of ${listTypes.join(", ")}`);
  const start = indexParam(query("start"), "start", 0);
  const end = indexParam(query("end"), "end", start + defaultPageSize - 1);
  if (end < start) throw invalid("end", "end must be at least start");
  if (end - start + 1 > maxPageSize)
    throw invalid(
      "end",
      `a page holds at most ${maxPageSize} jobs: end must be at most start + ${maxPageSize - 1}`,
    );
  const asc = query("asc") ?? "false";
  if (!["true", "false", "1", "0"].includes(asc)) throw invalid("asc", "asc must be true or false");
  return { state: state as JobType, start, end, asc: asc === "true" || asc === "1" };
}

type FinishedState = "failed" | "completed";

function retryRequest(body: unknown): { state: FinishedState | undefined; opts: RetryOptions } {
  if (body === undefined) return { state: undefined, opts: {} };
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("body", "the body must be an object { state, resetAttemptsMade, resetAttemptsStarted }");
  const fields = body as Record<string, unknown>;
  for (const [field, value] of Object.entries(fields)) {
    if (field === "state") {
      if (value !== "failed" && value !== "completed")
        throw invalid("state", "state must be failed or completed");
    } else if (field === "resetAttemptsMade" || field === "resetAttemptsStarted") {
      if (typeof value !== "boolean") throw invalid(field, `${field} must be a boolean`);
    } else {
      throw invalid(
        field,
        `unknown field "${field}": a retry takes state, resetAttemptsMade, resetAttemptsStarted`,
      );
    }
  }
  const { state, ...opts } = fields as { state?: FinishedState } & RetryOptions;
  return { state, opts };
}

/** Retries from the given state, or from whichever finished set holds the job. */
async function retryFinished(
  job: Job,
  state: FinishedState | undefined,
  opts: RetryOptions,
): Promise<FinishedState> {
  for (const from of state ? [state] : (["failed", "completed"] as const)) {
    try {
      await job.retry(from, opts);
      return from;
    } catch (error) {
      if (!(error instanceof JobNotInStateError)) throw error;
    }
  }
  const wanted = state ?? "failed or completed";
  throw new HttpError(
    409,
    errorCodes.wrongState,
    `job "${job.id}" in queue "${job.queueName}" is not ${wanted}`,
  );
}

export function addJobRoutes(app: Hono<AppEnv>, access: QueueAccess): void {
  app.get("/queues/:queue/jobs", async (c) => {
    const queue = access.queue(c);
    const { state, start, end, asc } = listQuery((name) => c.req.query(name));
    const [jobs, counts] = await Promise.all([
      queue.getJobs([state], start, end, asc),
      queue.getJobCounts(state),
    ]);
    const shown: JobState = state === "wait" || state === "paused" ? "waiting" : (state as JobState);
    return c.json({
      state,
      start,
      end,
      asc,
      total: counts[state] ?? 0,
      jobs: jobs.map((job) => jobView(job, shown, false)),
    });
  });

  app.get("/queues/:queue/jobs/:id", async (c) => {
    const startedAt = Date.now();
    const queue = access.queue(c);
    const waitMs = waitParam(c.req.query("wait"));
    const id = access.jobId(c);
    let { job, state } = await access.findJobWithState(queue, id);
    if (waitMs > 0 && state !== "completed" && state !== "failed") {
      const { redis, prefix } = access.settings;
      const deadline = waitDeadline(c, waitMs, startedAt);
      await untilFinished({ redis, prefix, queue: queue.name, id, deadline, signal: c.req.raw.signal });
      ({ job, state } = await access.findJobWithState(queue, id));
    }
    return c.json(jobView(job, state, true));
  });

  app.delete("/queues/:queue/jobs/:id", adminOnly, async (c) => {
    const queue = access.queue(c);
    const job = await access.findJob(queue, access.jobId(c));
    // The route keeps its children (BullMQ's own default removes them).
    await job.remove({ removeChildren: false });
    return c.json({ id: job.id, removed: true });
  });

  app.post("/queues/:queue/jobs/:id/retry", adminOnly, async (c) => {
    const queue = access.queue(c);
    const { state, opts } = retryRequest(await readJsonBody(c.req.raw, access.settings.maxBodyBytes, false));
    const job = await access.findJob(queue, access.jobId(c));
    const prev = await retryFinished(job, state, opts);
    await access.kick(queue.name);
    return c.json({ id: job.id, state: job.priority > 0 ? "prioritized" : "waiting", prev });
  });
}
