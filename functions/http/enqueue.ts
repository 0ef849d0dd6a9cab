/**
 * `POST /queues/:queue/jobs`: one job `{ name, data, opts }` or an array of up to 1,000, written in
 * one atomic add. An `Idempotency-Key` header becomes the job id (`<key>-<index>` for an array), so a
 * client that retries a request gets the jobs it already made back as `duplicated`; the same key with
 * another body answers 422 (idempotency.ts).
 */
import type { Hono } from "hono";
import * as z from "zod/mini";
import {
  type AddedJob,
  type BulkJob,
  Job,
  type JobState,
  type JobsOptions,
  ParentConflictError,
  ParentNotFoundError,
  ValidationError,
} from "../../core/index.ts";
import { Checker, checkJobId } from "../../core/internal.ts";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { asHttpError, errorCodes, HttpError, invalid } from "./http-errors.ts";
import { checkAfterAdd, checkBeforeAdd, keyHeader } from "./idempotency.ts";
import { addJobsBody, addResult, addResults, maxJobsPerRequest } from "./job-schemas.ts";
import { stateOfCreatedJob } from "./job-view.ts";
import type { QueueAccess } from "./queue-access.ts";
import { jsonAnswer, jsonBody, namedQueue, queueParams } from "./route-parts.ts";
import { optional } from "./schema-docs.ts";
import { jobId } from "./schema-rules.ts";
import { validBody } from "./validation.ts";

export { maxJobsPerRequest };

const keyRules =
  "Makes the add safe to retry. The key becomes the job id (`<key>-<index>` for an array), so it must itself be a valid custom job id; with opts.jobId set to anything else it answers 400 naming Idempotency-Key. The same key with the same body answers the original jobs (outcome duplicated); with another body (other name, data, options or jobs) 422 idempotency_key_reused. The key holds while a job with its id exists: once that job is removed (removeOnComplete, removeOnFail, clean, DELETE), the same key adds a new job, so keep finished jobs (e.g. removeOnComplete: { age: 86400 }) as long as clients may retry.";

const headers = z.object({
  [keyHeader]: optional(jobId, { param: { description: keyRules }, example: "signup-42" }),
});

export const addJobsRoute = {
  method: "post",
  path: "/queues/{queue}/jobs",
  operationId: "addJobs",
  tags: ["jobs"],
  summary: "Add one job, or an array of up to 1,000 in one atomic call",
  description:
    "Each job gets the queue's default options (createHttpApp's queueDefaultJobOptions, NIMBUSQ_QUEUE_DEFAULTS) under its own opts, which core checks again (data at most 512 KB as JSON, timestamp + delay below 2^41, deduplication not with parent). Numbers JSON cannot carry (1e400) answer 400 naming the field. With a worker kick configured, an add that made a job ready starts the queue's worker at once.",
  request: {
    params: queueParams,
    headers,
    body: jsonBody("AddJobsRequest", addJobsBody, true, "One job, or an array of 1 to 1,000 jobs"),
  },
  responses: {
    202: {
      ...jsonAnswer(
        "Added: one AddResult for one job, { jobs } in request order for an array",
        z.union([addResult, addResults]),
      ),
      headers: {
        Location: {
          description: "For one job: its URL, /queues/{queue}/jobs/{id}",
          required: false,
          schema: { type: "string" },
        },
      },
    },
    ...errorResponses({
      body: true,
      extra: {
        400: [errorCodes.parentNotFound],
        409: [errorCodes.jobInFlight, errorCodes.parentConflict],
        422: [errorCodes.idempotencyKeyReused],
        503: [errorCodes.retryLater],
      },
    }),
  },
} satisfies ApiRoute;

/** The job id an Idempotency-Key gives the job at `index` (undefined for a single job). */
function idFromKey(key: string, index: number | undefined): string {
  if (index === undefined) return key;
  const id = `${key}-${index}`;
  try {
    // The key itself passed the header's schema; its suffixed ids may still be too long.
    checkJobId(new Checker(keyHeader), keyHeader, id);
  } catch (error) {
    if (error instanceof ValidationError)
      // The header is not quoted back: no answer echoes a raw header value.
      throw invalid(
        keyHeader,
        `${keyHeader} must make valid job ids: ${error.rule.replace(/, got .*$/s, "")}`,
      );
    throw error;
  }
  return id;
}

type AddJobsBody = z.output<typeof addJobsBody>;

/** The jobs to add, each with its id from the Idempotency-Key. */
function jobsFromBody(body: AddJobsBody, key: string | undefined): { jobs: BulkJob[]; many: boolean } {
  const many = Array.isArray(body);
  const items = Array.isArray(body) ? body : [body];
  const jobs = items.map((item, i): BulkJob => {
    const options = { ...item.opts } as JobsOptions;
    if (key !== undefined) {
      const id = idFromKey(key, many ? i : undefined);
      if (options.jobId !== undefined && options.jobId !== id)
        throw invalid(keyHeader, `${keyHeader} conflicts with ${many ? `[${i}].` : ""}opts.jobId`);
      options.jobId = id;
    }
    return { name: item.name, data: item.data, opts: options };
  });
  return { jobs, many };
}

/** Core names a bulk's fields `jobs[i].…` (and a lone job's without index); the body's are `[i].…`. */
function bodyField(field: string, many: boolean): string {
  if (!many) return field;
  return field.startsWith("jobs[") ? field.slice("jobs".length) : `[0].${field}`;
}

/** States after the add: known for created jobs, looked up (in one call) for the others. */
async function statesAfterAdd(added: AddedJob[]): Promise<JobState[]> {
  const looked = await Job.getStates(added.filter((a) => a.outcome !== "created").map((a) => a.job));
  let next = 0;
  return added.map((a) =>
    a.outcome === "created" ? stateOfCreatedJob(a.job) : (looked[next++] as JobState),
  );
}

export function addEnqueueRoute(app: Hono<AppEnv>, access: QueueAccess): void {
  mount(app, addJobsRoute, [namedQueue(access)], async (c, { headers: given }) => {
    const queue = c.get("queue");
    const body = (await validBody(c, addJobsBody, {
      required: true,
      limit: access.settings.maxBodyBytes,
    })) as AddJobsBody;
    const key = given[keyHeader];
    const { jobs, many } = jobsFromBody(body, key);
    let added: AddedJob[];
    try {
      const checked = key === undefined ? undefined : await checkBeforeAdd(queue, jobs, many);
      added = await queue.addBulkWithOutcomes(jobs);
      if (checked) await checkAfterAdd(queue, jobs, many, added, checked);
    } catch (error) {
      if (error instanceof ValidationError) {
        const field = bodyField(error.field, many);
        throw invalid(field, `${field} must be ${error.rule}`);
      }
      const known = asHttpError(error);
      if (known && !many && (error instanceof ParentNotFoundError || error instanceof ParentConflictError))
        throw new HttpError(known.status, known.code, known.message, "opts.parent");
      throw error;
    }
    const states = (await statesAfterAdd(added)).map((state, i) =>
      added[i]?.handoff === "handed" ? "active" : state,
    );
    const results = added.map(({ job, outcome }, i) => ({
      id: job.id,
      state: states[i] as JobState,
      outcome,
    }));
    const ready = added.some(
      (a, i) => a.outcome === "created" && (states[i] === "waiting" || states[i] === "prioritized"),
    );
    // Awaited: on Lambda, work left running after the answer is frozen with the function. An add the
    // queue's handoff took has started its worker already.
    const started = added.some((a) => a.handoff);
    if (ready && !started) await access.kick(queue.name);
    else if (!started) {
      // A delayed job due before the sweeper's next tick: the worker can wait for it.
      const dueSoon = added
        .filter((a, i) => a.outcome === "created" && states[i] === "delayed")
        .map(({ job }) => job.timestamp + job.delay)
        .filter((due) => due <= Date.now() + access.settings.wakeWithinMs);
      if (dueSoon.length > 0) await access.kick(queue.name, { wakeAt: Math.min(...dueSoon) });
    }
    if (many) return c.json({ jobs: results }, 202);
    const [result] = results as [(typeof results)[number]];
    const location = `/queues/${encodeURIComponent(queue.name)}/jobs/${encodeURIComponent(result.id)}`;
    return c.json(result, 202, { Location: location });
  });
}
