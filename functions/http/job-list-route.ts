/** `GET /queues/:queue/jobs?state=…`: the jobs of one state, a page at a time, without their data. */
import type { Hono } from "hono";
import * as z from "zod/mini";
import type { JobState, JobType } from "../../core/index.ts";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { jobSummarySchema } from "./job-schemas.ts";
import { jobSummary } from "./job-view.ts";
import type { QueueAccess } from "./queue-access.ts";
import { jsonAnswer, namedQueue, queueParams } from "./route-parts.ts";
import { doc, named, optional } from "./schema-docs.ts";
import { oneOf, queryInteger } from "./schema-rules.ts";

/** The types a list may ask for (`wait` and `paused` list what getState calls waiting). */
export const listTypes = [
  "waiting",
  "wait",
  "paused",
  "active",
  "prioritized",
  "delayed",
  "completed",
  "failed",
  "waiting-children",
] as const satisfies readonly JobType[];

/** Most jobs on one page. */
export const maxPageSize = 1000;
const defaultPageSize = 20;
const largestIndex = 10 ** 15 - 1;

const index = (description: string, byDefault?: number) =>
  optional(
    queryInteger("a non-negative integer", largestIndex),
    byDefault === undefined ? { description } : { description, default: byDefault },
  );

const query = z
  .object({
    state: doc(oneOf(listTypes), { description: "The state to list" }),
    start: index("Index of the first job, from 0", 0),
    end: index(
      `Index of the last job, inclusive: at least start and at most start + ${maxPageSize - 1}; default start + ${defaultPageSize - 1}`,
    ),
    asc: optional(z.enum(["true", "false", "1", "0"], { error: "true or false" }), {
      type: "boolean",
      enum: undefined,
      default: false,
      description: "Oldest first (true or 1); newest first by default",
    }),
  })
  .check(
    z.superRefine(({ start = 0, end }, ctx) => {
      if (end === undefined) return;
      if (end < start) ctx.addIssue({ code: "custom", path: ["end"], message: "at least start" });
      else if (end - start + 1 > maxPageSize)
        ctx.addIssue({
          code: "custom",
          path: ["end"],
          message: `at most start + ${maxPageSize - 1} (a page holds at most ${maxPageSize} jobs)`,
        });
    }),
  );

const jobPage = named(
  "JobPage",
  z.object({
    state: z.enum(listTypes),
    start: z.int(),
    end: z.int(),
    asc: z.boolean(),
    total: doc(z.int(), { description: "Jobs in that state in all" }),
    jobs: z.array(jobSummarySchema),
  }),
);

export const listJobsRoute = {
  method: "get",
  path: "/queues/{queue}/jobs",
  operationId: "listJobs",
  tags: ["jobs"],
  summary: "List the jobs of one state, a page at a time (without their data)",
  request: { params: queueParams, query },
  responses: {
    200: jsonAnswer("A page of jobs", jobPage),
    ...errorResponses({}),
  },
} satisfies ApiRoute;

export function addJobListRoute(app: Hono<AppEnv>, access: QueueAccess): void {
  mount(app, listJobsRoute, [namedQueue(access)], async (c, { query: asked }) => {
    const queue = c.get("queue");
    const start = asked.start ?? 0;
    const end = asked.end ?? start + defaultPageSize - 1;
    const asc = asked.asc === "true" || asked.asc === "1";
    const { state } = asked;
    const [jobs, counts] = await Promise.all([
      queue.getJobs([state], start, end, asc),
      queue.getJobCounts(state),
    ]);
    const shown: JobState = state === "wait" || state === "paused" ? "waiting" : state;
    return c.json(
      {
        state,
        start,
        end,
        asc,
        total: counts[state] ?? 0,
        jobs: jobs.map((job) => jobSummary(job, shown)),
      },
      200,
    );
  });
}
