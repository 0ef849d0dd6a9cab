/**
 * Jobs as the HTTP API takes them (`JobInput`, its `opts`) and shows them (`Job`, `AddResult`). The
 * ranges are core's constants; core checks every add again (and alone knows the rules no schema can
 * state: data size as JSON, `timestamp + delay`, a parent that exists), so the schema can only ever be
 * stricter in form, never looser in substance.
 */
import { z } from "@hono/zod-openapi";
import type { JobState } from "../../core/index.ts";
import { defaultMaxDataBytes, maxDueTime, maxPriority } from "../../core/internal.ts";
import { flag, integer, jobId, jobName, jsonValue, queueName, text } from "./schema-rules.ts";

/** Most jobs one request may add (one addJobs call). */
export const maxJobsPerRequest = 1000;

const keepJobs = z
  .union(
    [
      flag(),
      integer(0),
      z.strictObject(
        {
          count: integer(0).optional().openapi({ description: "Keep at most this many jobs" }),
          age: integer(1).optional().openapi({ description: "Keep jobs at most this old (seconds)" }),
          limit: integer(1).optional().openapi({ description: "Most jobs removed in one go" }),
        },
        { error: "an object { count, age, limit }" },
      ),
    ],
    { error: "true, false, a count of jobs to keep, or { count, age, limit }" },
  )
  .openapi("KeepJobs", {
    description: "Remove the finished job: true (at once), false (keep), a count of jobs to keep, or limits",
  });

const backoff = z
  .union(
    [
      integer(0),
      z.strictObject(
        {
          type: text().openapi({ description: "fixed, exponential, or a Worker's custom strategy" }),
          delay: integer(0).optional().openapi({ description: "Base delay in ms" }),
          jitter: z
            .number({ error: "a number from 0 to 1" })
            .min(0, { error: "a number from 0 to 1" })
            .max(1, { error: "a number from 0 to 1" })
            .optional()
            .openapi({ description: "Share of the delay drawn at random" }),
        },
        { error: "an object { type, delay, jitter }" },
      ),
    ],
    { error: "a delay in ms or { type, delay, jitter }" },
  )
  .openapi("Backoff", {
    description: "Delay between attempts: ms (fixed), or a strategy",
    example: { type: "exponential", delay: 1000 },
  });

/** Every option core accepts, with its range: the one list the input and the view share. */
const optionShape = {
  jobId: jobId.optional(),
  delay: integer(0, maxDueTime)
    .optional()
    .openapi({ description: "Milliseconds until the job is ready; timestamp + delay must stay below 2^41" }),
  priority: integer(0, maxPriority)
    .optional()
    .openapi({ description: "0 (default): none; 1 is the highest priority, 2097151 the lowest" }),
  lifo: flag().optional().openapi({ description: "Added at the head of the wait list" }),
  attempts: integer(0).optional().openapi({ description: "Tries in all (default 1)" }),
  backoff: backoff.optional(),
  removeOnComplete: keepJobs.optional(),
  removeOnFail: keepJobs.optional(),
  deduplication: z
    .strictObject(
      {
        id: text(),
        ttl: integer(1).optional().openapi({ description: "Window in ms (default: until it finishes)" }),
        extend: flag().optional(),
        replace: flag().optional(),
      },
      { error: "an object { id, ttl, extend, replace }" },
    )
    .optional()
    .openapi({ description: "Adds with the same id make one job while the window lasts; not with parent" }),
  parent: z
    .strictObject(
      {
        id: text().openapi({ description: "The parent job's id" }),
        queue: text().openapi({
          description: 'The parent\'s queue as "<prefix>:<queueName>"',
          example: "bull:orders",
        }),
      },
      { error: "an object { id, queue }" },
    )
    .optional()
    .openapi({
      description: "An existing parent job that waits for this one (400 parent_not_found if none)",
    }),
  timestamp: integer(0, maxDueTime).optional().openapi({ description: "Creation time in ms (default: now)" }),
  stackTraceLimit: integer(0).optional(),
  keepLogs: integer(0).optional(),
  sizeLimit: integer(1).optional().openapi({ description: "Largest data of this job, in bytes of JSON" }),
  failParentOnFailure: flag().optional(),
  continueParentOnFailure: flag().optional(),
  ignoreDependencyOnFailure: flag().optional(),
  removeDependencyOnFailure: flag().optional(),
  timeout: integer(1).optional().openapi({ description: "Per-attempt time limit in ms" }),
  deadLetter: z
    .strictObject({ queue: queueName, prefix: text().optional() }, { error: "an object { queue, prefix }" })
    .optional()
    .openapi({ description: "nimbusq: copy the job to this queue when it fails for good" }),
};

export const jobOptions = z
  .strictObject(optionShape, { error: "an object of job options" })
  .openapi("JobOptions", {
    description:
      "BullMQ's job options; unknown ones are refused (repeat included: job schedulers replace it). Merged over the queue's default options",
    example: { attempts: 3, backoff: { type: "exponential", delay: 1000 }, priority: 2, jobId: "signup-42" },
  });

const jobExample = { name: "welcome-email", data: { to: "ada@example.com" }, opts: { attempts: 3 } };

export const jobInput = z
  .strictObject(
    {
      name: jobName,
      data: z
        .unknown()
        .optional()
        .openapi({
          description: `Any JSON value, at most ${defaultMaxDataBytes} bytes (512 KB) as JSON; {} when left out`,
        }),
      opts: jobOptions.optional(),
    },
    { error: "an object { name, data, opts }" },
  )
  .openapi("JobInput", { example: jobExample });

export const addJobsBody = z
  .union(
    [
      jobInput,
      z
        .array(jobInput, { error: `an array of 1 to ${maxJobsPerRequest} jobs` })
        .min(1, { error: `one job or an array of 1 to ${maxJobsPerRequest} jobs` })
        .max(maxJobsPerRequest, { error: `one job or an array of 1 to ${maxJobsPerRequest} jobs` }),
    ],
    { error: `one job { name, data, opts } or an array of 1 to ${maxJobsPerRequest} jobs` },
  )
  .openapi("AddJobsRequest", { example: jobExample });

const jobStates = [
  "waiting",
  "delayed",
  "prioritized",
  "waiting-children",
  "active",
  "completed",
  "failed",
  "unknown",
] as const satisfies readonly JobState[];

export const jobState = z.enum(jobStates).openapi("JobState");

export const addResult = z
  .object({
    id: z.string(),
    state: jobState,
    outcome: z.enum(["created", "duplicated", "deduplicated"]).openapi({
      description:
        "duplicated: a job with that id existed (nothing was written); deduplicated: id is the deduplication window's owner",
    }),
  })
  .openapi("AddResult", { example: { id: "signup-42", state: "waiting", outcome: "created" } });

export const addResults = z
  .object({ jobs: z.array(addResult) })
  .openapi("AddResults", { example: { jobs: [{ id: "7", state: "waiting", outcome: "created" }] } });

/** Stored options as read back: ids shown as stored, and whatever else BullMQ keeps there. */
const storedOptions = z
  .looseObject({
    ...optionShape,
    jobId: z.string().optional(),
    parent: z.looseObject({ id: z.string(), queue: z.string() }).optional(),
  })
  .openapi("StoredJobOptions", { description: "The job's options as stored (BullMQ's own extra keys kept)" });

const jobFields = {
  id: z.string(),
  name: z.string(),
  state: jobState,
  progress: jsonValue,
  returnvalue: jsonValue,
  failedReason: z.string().nullable(),
  attemptsMade: z.int(),
  attemptsStarted: z.int(),
  timestamp: z.int(),
  processedOn: z.int().nullable(),
  finishedOn: z.int().nullable(),
  delay: z.int(),
  priority: z.int(),
  opts: storedOptions,
};

const summaryExample = {
  id: "signup-42",
  name: "welcome-email",
  state: "completed",
  progress: 0,
  returnvalue: { sent: true },
  failedReason: null,
  attemptsMade: 1,
  attemptsStarted: 1,
  timestamp: 1767225600000,
  processedOn: 1767225600050,
  finishedOn: 1767225600120,
  delay: 0,
  priority: 0,
  opts: { attempts: 3 },
};

/** A job in a list: everything but its data (a page would carry up to 1,000 payloads). */
export const jobSummarySchema = z.object(jobFields).openapi("JobSummary", { example: summaryExample });

export const jobViewSchema = z
  .object({ ...jobFields, data: jsonValue })
  .openapi("Job", { example: { ...summaryExample, data: { to: "ada@example.com" } } });
