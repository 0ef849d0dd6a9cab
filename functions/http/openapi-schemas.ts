/** The OpenAPI schemas of the HTTP API's bodies: jobs in and out, and the one error shape. */
import { errorCodes } from "./http-errors.ts";

export const jobInput = {
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: {
    name: { type: "string" },
    data: { description: "Any JSON value (stored as BullMQ stores it; up to 512 KB)" },
    opts: {
      type: "object",
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
