/**
 * The OpenAPI schemas of the HTTP API's bodies (jobs in and out, the one error shape) and of the
 * names that become key names (queue names, job ids), with core's rules (core/redis/names.ts).
 */
import {
  jobIdPattern,
  maxJobIdLength,
  maxJobNameBytes,
  maxQueueNameBytes,
  queueNamePattern,
} from "../../core/internal.ts";
import { errorCodes } from "./http-errors.ts";
import { maxWaitMs } from "./job-wait.ts";

/** Queue names: the rules of core/redis/names.ts; the byte limit is stated, maxLength only bounds it. */
export const queueNameSchema = {
  type: "string",
  minLength: 1,
  maxLength: maxQueueNameBytes,
  pattern: queueNamePattern,
  description: `At most ${maxQueueNameBytes} bytes of UTF-8; no control characters, ":", "/", glob characters (* ? [ ] \\), "{" or "}"; not ".", ".." or "nq"`,
};

export const queueParam = {
  name: "queue",
  in: "path",
  required: true,
  description: `Queue name (${queueNameSchema.description}); 404 when an allow-list is configured and lacks it`,
  schema: queueNameSchema,
};

export const waitParam = {
  name: "wait",
  in: "query",
  description: `Milliseconds to wait for the job to finish (completed, or failed for good): the answer comes when it finishes, or after wait ms with its state then; 0 or absent answers at once. Works at every events level (the job hash is polled, at most once a second)`,
  schema: { type: "integer", minimum: 0, maximum: maxWaitMs, default: 0 },
};

export const idParam = {
  name: "id",
  in: "path",
  required: true,
  description:
    "Job id; ids that name one of the queue's own keys (meta, wait, 1:lock, …) answer 404. Dead letters (dl:…) and scheduler iterations (repeat:…) are readable",
  schema: { type: "string", minLength: 1, maxLength: maxJobIdLength },
};

export const idempotencyKeyParam = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Becomes the job id (`<key>-<index>` for an array), which must follow opts.jobId's rules: a repeated request with the same body finds its jobs as duplicated; the same key with another body answers 422",
  schema: { type: "string", minLength: 1, maxLength: maxJobIdLength },
};

/** A custom job id (opts.jobId, or made from Idempotency-Key): core's rules, as one pattern. */
export const jobIdSchema = {
  type: "string",
  minLength: 1,
  maxLength: maxJobIdLength,
  pattern: jobIdPattern,
  description:
    'Not an integer; ":" only as three segments; not a key name of the queue (wait, meta, active, metrics, …) nor ending in a job sub-key name (:lock, :logs, …); not in a reserved id space (dl:, repeat:, metrics:, de:, dn:, nq:, nq-req:)',
};

export const jobInput = {
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: {
    name: {
      type: "string",
      maxLength: maxJobNameBytes,
      description: `At most ${maxJobNameBytes.toLocaleString("en-US")} bytes of UTF-8`,
    },
    data: { description: "Any JSON value (stored as BullMQ stores it; up to 512 KB)" },
    opts: {
      type: "object",
      properties: { jobId: jobIdSchema },
      description:
        "BullMQ job options: jobId, delay, priority, lifo, attempts, backoff, removeOnComplete, removeOnFail, deduplication, parent, …; nimbusq's deadLetter { queue, prefix? } copies a job that fails for good to that queue",
    },
  },
};

export const jobState = {
  type: "string",
  enum: ["waiting", "delayed", "prioritized", "waiting-children", "active", "completed", "failed", "unknown"],
};

export const addResult = {
  type: "object",
  required: ["id", "state", "outcome"],
  properties: {
    id: { type: "string" },
    state: jobState,
    outcome: {
      type: "string",
      enum: ["created", "duplicated", "deduplicated"],
      description:
        "duplicated: a job with that id existed; deduplicated: id is the deduplication window's owner",
    },
  },
};

const nullable = (type: string) => ({ type: [type, "null"] });
export const jobProperties = {
  id: { type: "string" },
  name: { type: "string" },
  state: jobState,
  progress: {},
  returnvalue: {},
  failedReason: nullable("string"),
  attemptsMade: { type: "integer" },
  attemptsStarted: { type: "integer" },
  timestamp: { type: "integer" },
  processedOn: nullable("integer"),
  finishedOn: nullable("integer"),
  delay: { type: "integer" },
  priority: { type: "integer" },
  opts: { type: "object" },
};

export const errorSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", enum: Object.values(errorCodes) },
        message: { type: "string" },
        field: {
          type: "string",
          description:
            "The offending input: a body path (opts.priority, [3].data), a query parameter, a header or path parameter",
        },
      },
    },
  },
};

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/** The error answers the paths refer to (`#/components/responses/<name>`). */
export const errorResponses = {
  BadRequest: errorResponse(
    "Invalid JSON, body, queue name, parameter or job option, or a parent job that does not exist (parent_not_found); `field` names the input",
  ),
  Unauthorized: {
    ...errorResponse(
      "No Authorization header, a malformed one (fixed message; the header is never quoted back), or a token that is not valid",
    ),
    headers: { "WWW-Authenticate": { schema: { type: "string" }, description: 'Bearer realm="nimbusq"' } },
  },
  Forbidden: errorResponse(
    "The token is not an admin token (or a CORS preflight came from an origin not allowed)",
  ),
  NotFound: errorResponse("Unknown route, queue (code unknown_queue) or job (code job_not_found)"),
  MethodNotAllowed: {
    ...errorResponse("The path exists, the method (any other, unknown ones included) does not"),
    headers: { Allow: { schema: { type: "string" }, description: "The methods the path serves" } },
  },
  IdempotencyKeyReused: errorResponse(
    "The Idempotency-Key was already used with another request (other name, data or options, or other jobs); code idempotency_key_reused. The same key with the same body answers the original jobs (outcome duplicated)",
  ),
  Conflict: errorResponse(
    "The job is locked by a worker (job_locked), not in the state the operation needs or a job scheduler's current iteration (wrong_state), or exists with another parent (parent_conflict)",
  ),
  PayloadTooLarge: errorResponse("The body is over the size limit"),
  UnsupportedMediaType: errorResponse("The body is not declared as application/json"),
  Internal: errorResponse('A server fault; the body only says "internal error"'),
};
