/**
 * Jobs as the HTTP API takes them (`JobInput`, its `opts`) and shows them (`Job`, `AddResult`). The
 * ranges are core's constants; core checks every add again (and alone knows the rules no schema can
 * state: data size as JSON, `timestamp + delay`, a parent that exists), so the schema can only ever be
 * stricter in form, never looser in substance.
 */
import * as z from "zod/mini";
import type { JobState } from "../../core/index.ts";
import { defaultMaxDataBytes, maxDueTime, maxPriority } from "../../core/internal.ts";
import { doc, named, optional } from "./schema-docs.ts";
import { flag, integer, jobId, jobName, jsonValue, queueName, text } from "./schema-rules.ts";

/** Most jobs one request may add (one addJobs call). */
export const maxJobsPerRequest = 1000;

const keepJobs = named(
  "KeepJobs",
  z.union(
    [
      flag(),
      integer(0),
      z.strictObject(
        {
          count: optional(integer(0), { description: "Keep at most this many jobs" }),
          age: optional(integer(1), { description: "Keep jobs at most this old (seconds)" }),
          limit: optional(integer(1), { description: "Most jobs removed in one go" }),
        },
        { error: "an object { count, age, limit }" },
      ),
    ],
    { error: "true, false, a count of jobs to keep, or { count, age, limit }" },
  ),
  {
    description: "Remove the finished job: true (at once), false (keep), a count of jobs to keep, or limits",
  },
);

const share = "a number from 0 to 1";
const backoff = named(
  "Backoff",
  z.union(
    [
      integer(0),
      z.strictObject(
        {
          type: doc(text(), { description: "fixed, exponential, or a Worker's custom strategy" }),
          delay: optional(integer(0), { description: "Base delay in ms" }),
          jitter: optional(
            z.number({ error: share }).check(z.gte(0, { error: share }), z.lte(1, { error: share })),
            { description: "Share of the delay drawn at random" },
          ),
        },
        { error: "an object { type, delay, jitter }" },
      ),
    ],
    { error: "a delay in ms or { type, delay, jitter }" },
  ),
  {
    description: "Delay between attempts: ms (fixed), or a strategy",
    example: { type: "exponential", delay: 1000 },
  },
);

/** Every option core accepts, with its range: the one list the input and the view share. */
const optionShape = {
  jobId: optional(jobId),
  delay: optional(integer(0, maxDueTime), {
    description: "Milliseconds until the job is ready; timestamp + delay must stay below 2^41",
  }),
  priority: optional(integer(0, maxPriority), {
    description: "0 (default): none; 1 is the highest priority, 2097151 the lowest",
  }),
  lifo: optional(flag(), { description: "Added at the head of the wait list" }),
  attempts: optional(integer(0), { description: "Tries in all (default 1)" }),
  backoff: optional(backoff),
  removeOnComplete: optional(keepJobs),
  removeOnFail: optional(keepJobs),
  deduplication: optional(
    z.strictObject(
      {
        id: text(),
        ttl: optional(integer(1), { description: "Window in ms (default: until it finishes)" }),
        extend: optional(flag()),
        replace: optional(flag()),
      },
      { error: "an object { id, ttl, extend, replace }" },
    ),
    { description: "Adds with the same id make one job while the window lasts; not with parent" },
  ),
  parent: optional(
    z.strictObject(
      {
        id: doc(text(), { description: "The parent job's id" }),
        queue: doc(text(), {
          description: 'The parent\'s queue as "<prefix>:<queueName>"',
          example: "bull:orders",
        }),
      },
      { error: "an object { id, queue }" },
    ),
    { description: "An existing parent job that waits for this one (400 parent_not_found if none)" },
  ),
  timestamp: optional(integer(0, maxDueTime), { description: "Creation time in ms (default: now)" }),
  stackTraceLimit: optional(integer(0)),
  keepLogs: optional(integer(0)),
  sizeLimit: optional(integer(1), { description: "Largest data of this job, in bytes of JSON" }),
  failParentOnFailure: optional(flag()),
  continueParentOnFailure: optional(flag()),
  ignoreDependencyOnFailure: optional(flag()),
  removeDependencyOnFailure: optional(flag()),
  timeout: optional(integer(1), { description: "Per-attempt time limit in ms" }),
  deadLetter: optional(
    z.strictObject({ queue: queueName, prefix: optional(text()) }, { error: "an object { queue, prefix }" }),
    { description: "nimbusq: copy the job to this queue when it fails for good" },
  ),
  group: optional(z.strictObject({ id: text() }, { error: "an object { id }" }), {
    description:
      "BullMQ Pro's groups: the job is served round-robin with other groups' jobs (a tenant, a customer). The id has no ':'",
  }),
};

export const jobOptions = named(
  "JobOptions",
  z.strictObject(optionShape, { error: "an object of job options" }),
  {
    description:
      "BullMQ's job options; unknown ones are refused (repeat included: job schedulers replace it). Merged over the queue's default options",
    example: { attempts: 3, backoff: { type: "exponential", delay: 1000 }, priority: 2, jobId: "signup-42" },
  },
);

const jobExample = { name: "welcome-email", data: { to: "ada@example.com" }, opts: { attempts: 3 } };

export const jobInput = named(
  "JobInput",
  z.strictObject(
    {
      name: jobName,
      data: optional(z.unknown(), {
        description: `Any JSON value, at most ${defaultMaxDataBytes} bytes (512 KB) as JSON; {} when left out`,
      }),
      opts: optional(jobOptions),
    },
    { error: "an object { name, data, opts }" },
  ),
  { example: jobExample },
);

const jobsRule = `one job or an array of 1 to ${maxJobsPerRequest} jobs`;

/** The body of addJobs (openapi.ts names it AddJobsRequest with the route's other request bodies). */
export const addJobsBody = doc(
  z.union(
    [
      jobInput,
      z
        .array(jobInput, { error: `an array of 1 to ${maxJobsPerRequest} jobs` })
        .check(z.minLength(1, { error: jobsRule }), z.maxLength(maxJobsPerRequest, { error: jobsRule })),
    ],
    { error: `one job { name, data, opts } or an array of 1 to ${maxJobsPerRequest} jobs` },
  ),
  { example: jobExample },
);

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

export const jobState = named("JobState", z.enum(jobStates));

export const addResult = named(
  "AddResult",
  z.object({
    id: z.string(),
    state: jobState,
    outcome: doc(z.enum(["created", "duplicated", "deduplicated"]), {
      description:
        "duplicated: a job with that id existed (nothing was written); deduplicated: id is the deduplication window's owner",
    }),
  }),
  { example: { id: "signup-42", state: "waiting", outcome: "created" } },
);

export const addResults = named("AddResults", z.object({ jobs: z.array(addResult) }), {
  example: { jobs: [{ id: "7", state: "waiting", outcome: "created" }] },
});

/** Stored options as read back: ids shown as stored, and whatever else BullMQ keeps there. */
const storedOptions = named(
  "StoredJobOptions",
  z.looseObject({
    ...optionShape,
    jobId: z.optional(z.string()),
    parent: z.optional(z.looseObject({ id: z.string(), queue: z.string() })),
  }),
  { description: "The job's options as stored (BullMQ's own extra keys kept)" },
);

const jobFields = {
  id: z.string(),
  name: z.string(),
  state: jobState,
  progress: jsonValue,
  returnvalue: jsonValue,
  failedReason: z.nullable(z.string()),
  attemptsMade: z.int(),
  attemptsStarted: z.int(),
  timestamp: z.int(),
  processedOn: z.nullable(z.int()),
  finishedOn: z.nullable(z.int()),
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
export const jobSummarySchema = named("JobSummary", z.object(jobFields), { example: summaryExample });

export const jobViewSchema = named("Job", z.object({ ...jobFields, data: jsonValue }), {
  example: { ...summaryExample, data: { to: "ada@example.com" } },
});
