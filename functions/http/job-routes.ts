/**
 * One job: `GET /queues/:queue/jobs/:id` (with `?wait=<ms>`: once it finishes), and the admin routes
 * `DELETE /queues/:queue/jobs/:id` and `POST /queues/:queue/jobs/:id/retry`.
 */
import type { Hono } from "hono";
import * as z from "zod/mini";
import { type Job, JobNotInStateError, type RetryOptions } from "../../core/index.ts";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { errorCodes, HttpError } from "./http-errors.ts";
import { jobViewSchema } from "./job-schemas.ts";
import { jobView } from "./job-view.ts";
import { jobWaits, maxWaitMs, waitDeadline } from "./job-wait.ts";
import { adminOnly } from "./middleware.ts";
import type { QueueAccess } from "./queue-access.ts";
import { adminSecurity, jobParams, jsonAnswer, jsonBody, namedQueue } from "./route-parts.ts";
import { doc, named, optional } from "./schema-docs.ts";
import { flag, oneOf, queryInteger } from "./schema-rules.ts";
import { validBody } from "./validation.ts";

const finishedStates = ["failed", "completed"] as const;
type FinishedState = (typeof finishedStates)[number];
const jobNotFound = { 404: [errorCodes.jobNotFound] };

export const getJobRoute = {
  method: "get",
  path: "/queues/{queue}/jobs/{id}",
  operationId: "getJob",
  tags: ["jobs"],
  summary: "Read a job, its data included; with wait, once it finishes",
  request: {
    params: jobParams,
    query: z.object({
      wait: optional(queryInteger(`an integer number of milliseconds from 0 to ${maxWaitMs}`, maxWaitMs), {
        default: 0,
        description:
          "Milliseconds to wait for the job to finish (completed, or failed for good): the answer comes when it does, or after wait ms with its state then. Works at every events level (the job hash is polled, at most once a second)",
      }),
    }),
  },
  responses: {
    200: jsonAnswer("The job", jobViewSchema),
    ...errorResponses({ extra: jobNotFound }),
  },
} satisfies ApiRoute;

export const removeJobRoute = {
  method: "delete",
  path: "/queues/{queue}/jobs/{id}",
  operationId: "removeJob",
  tags: ["jobs"],
  summary: "Remove a job (admin); its children stay",
  security: adminSecurity,
  request: { params: jobParams },
  responses: {
    200: jsonAnswer(
      "Removed",
      named("RemovedJob", z.object({ id: z.string(), removed: z.literal(true) }), {
        example: { id: "signup-42", removed: true },
      }),
    ),
    ...errorResponses({
      admin: true,
      extra: { ...jobNotFound, 409: [errorCodes.jobLocked, errorCodes.wrongState] },
    }),
  },
} satisfies ApiRoute;

const retryBody = doc(
  z.strictObject(
    {
      state: optional(oneOf(finishedStates), {
        description: "Default: whichever finished set holds the job",
      }),
      resetAttemptsMade: optional(flag()),
      resetAttemptsStarted: optional(flag()),
    },
    { error: "an object { state, resetAttemptsMade, resetAttemptsStarted }" },
  ),
  { example: { state: "failed", resetAttemptsMade: true } },
);

export const retryJobRoute = {
  method: "post",
  path: "/queues/{queue}/jobs/{id}/retry",
  operationId: "retryJob",
  tags: ["jobs"],
  summary: "Retry a failed or completed job (admin), as BullMQ's job.retry",
  security: adminSecurity,
  request: {
    params: jobParams,
    body: jsonBody("RetryJobRequest", retryBody, false, "Optional; an empty body is {}"),
  },
  responses: {
    200: jsonAnswer(
      "Back in line",
      named(
        "RetriedJob",
        z.object({ id: z.string(), state: z.enum(["waiting", "prioritized"]), prev: z.enum(finishedStates) }),
        { example: { id: "signup-42", state: "waiting", prev: "failed" } },
      ),
    ),
    ...errorResponses({
      admin: true,
      body: true,
      extra: { ...jobNotFound, 409: [errorCodes.wrongState] },
    }),
  },
} satisfies ApiRoute;

/** Retries from the given state, or from whichever finished set holds the job. */
async function retryFinished(
  job: Job,
  state: FinishedState | undefined,
  opts: RetryOptions,
): Promise<FinishedState> {
  for (const from of state ? [state] : finishedStates) {
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
  const startWait = jobWaits(access.settings);
  mount(app, getJobRoute, [namedQueue(access)], async (c, { query }) => {
    const startedAt = Date.now();
    const queue = c.get("queue");
    const waitMs = query.wait ?? 0;
    const id = access.jobId(c);
    // Registered before the read, so an event between the read and the wait is not missed.
    const wait = waitMs > 0 ? startWait(queue.name, id) : undefined;
    try {
      let { job, state } = await access.findJobWithState(queue, id);
      if (wait && state !== "completed" && state !== "failed") {
        await wait.until(waitDeadline(c, waitMs, startedAt), c.req.raw.signal);
        ({ job, state } = await access.findJobWithState(queue, id));
      }
      return c.json(jobView(job, state), 200);
    } finally {
      wait?.stop();
    }
  });

  mount(app, removeJobRoute, [adminOnly, namedQueue(access)], async (c) => {
    const job = await access.findJob(c.get("queue"), access.jobId(c));
    // The route keeps its children (BullMQ's own default removes them).
    await job.remove({ removeChildren: false });
    return c.json({ id: job.id, removed: true as const }, 200);
  });

  mount(app, retryJobRoute, [adminOnly, namedQueue(access)], async (c) => {
    const queue = c.get("queue");
    const body = await validBody(c, retryBody, { required: false, limit: access.settings.maxBodyBytes });
    const { state, ...opts } = body;
    const job = await access.findJob(queue, access.jobId(c));
    const prev = await retryFinished(job, state, opts);
    await access.kick(queue.name);
    const now = job.priority > 0 && !job.opts.group ? "prioritized" : ("waiting" as const);
    return c.json({ id: job.id, state: now, prev }, 200);
  });
}
