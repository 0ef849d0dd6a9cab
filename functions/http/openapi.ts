/** The OpenAPI 3.1 description of the HTTP API, served at `GET /openapi.json` (public). */
import { maxJobsPerRequest } from "./enqueue.ts";
import { listTypes, maxPageSize } from "./job-routes.ts";
import { maintenancePaths } from "./openapi-maintenance.ts";
import {
  addResult,
  errorResponses,
  errorSchema,
  idempotencyKeyParam,
  idParam,
  jobInput,
  jobProperties,
  queueNameSchema,
  queueParam,
  waitParam,
} from "./openapi-schemas.ts";
import { defaultRedriveCount, maxRedriveCount } from "./redrive-route.ts";

const json = (schema: object, description: string) => ({
  description,
  content: { "application/json": { schema } },
});
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Errors every authenticated route can answer. */
const common = {
  "400": error("BadRequest"),
  "401": error("Unauthorized"),
  "405": error("MethodNotAllowed"),
  "500": error("Internal"),
};
const admin = { ...common, "403": error("Forbidden") };

export const openApiDocument = {
  openapi: "3.1.0",
  info: {
    title: "nimbusq HTTP API",
    version: "1",
    description:
      "BullMQ 6 queues over Upstash Redis. Every route but this document needs `Authorization: Bearer <token>`; pause, resume, retry, remove, redrive, clean, drain and promote need an admin token. Request bodies are JSON (Content-Type application/json), 1 MiB at most by default. When the API is configured with a worker kick, requests that make jobs ready (add, retry, resume, promote) start the queue's worker at once, unless the queue already has its maximum of workers running. Added jobs get the queue's default job options (per queue when configured: createHttpApp's queueDefaultJobOptions, NIMBUSQ_QUEUE_DEFAULTS) under their own opts. Numbers JSON cannot carry (1e400) are refused with 400 naming the field; unknown body fields are refused the same way; no error message quotes a header value back. Any method a path does not serve, unknown ones included, answers 405 with an Allow header. CORS is off by default; with allowed origins configured (createHttpApp's cors, NIMBUSQ_CORS_ORIGINS), a preflight (OPTIONS with Origin and Access-Control-Request-Method) from an allowed origin needs no token and answers 204 with Access-Control-Allow-Methods (the path's methods), -Allow-Headers (Authorization, Content-Type, Idempotency-Key) and -Max-Age, one from another origin 403; every answer to an allowed origin carries Access-Control-Allow-Origin.",
  },
  security: [{ bearer: [] }],
  paths: {
    "/queues/{queue}/jobs": {
      parameters: [queueParam],
      post: {
        summary: "Add one job, or an array of up to 1,000 in one atomic call",
        parameters: [idempotencyKeyParam],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                oneOf: [
                  ref("JobInput"),
                  { type: "array", minItems: 1, maxItems: maxJobsPerRequest, items: ref("JobInput") },
                ],
              },
            },
          },
        },
        responses: {
          "202": json(
            {
              oneOf: [
                ref("AddResult"),
                { type: "object", properties: { jobs: { type: "array", items: ref("AddResult") } } },
              ],
            },
            "Added",
          ),
          ...common,
          "404": error("NotFound"),
          "409": error("Conflict"),
          "413": error("PayloadTooLarge"),
          "415": error("UnsupportedMediaType"),
          "422": error("IdempotencyKeyReused"),
        },
      },
      get: {
        summary: "List jobs of one state, a page at a time",
        parameters: [
          { name: "state", in: "query", required: true, schema: { type: "string", enum: listTypes } },
          { name: "start", in: "query", schema: { type: "integer", minimum: 0, default: 0 } },
          {
            name: "end",
            in: "query",
            description: `Inclusive; at most start + ${maxPageSize - 1}`,
            schema: { type: "integer", minimum: 0, default: 19 },
          },
          { name: "asc", in: "query", schema: { type: "boolean", default: false } },
        ],
        responses: {
          "200": json(
            {
              type: "object",
              properties: {
                state: { type: "string" },
                start: { type: "integer" },
                end: { type: "integer" },
                asc: { type: "boolean" },
                total: { type: "integer" },
                jobs: { type: "array", items: ref("JobSummary") },
              },
            },
            "A page of jobs (without their data)",
          ),
          ...common,
          "404": error("NotFound"),
        },
      },
    },
    "/queues/{queue}/jobs/{id}": {
      parameters: [queueParam, idParam],
      get: {
        summary: "Read a job, its data included; with wait, once it finishes",
        parameters: [waitParam],
        responses: { "200": json(ref("Job"), "The job"), ...common, "404": error("NotFound") },
      },
      delete: {
        summary: "Remove a job (admin); its children stay",
        responses: {
          "200": json(
            { type: "object", properties: { id: { type: "string" }, removed: { const: true } } },
            "Removed",
          ),
          ...admin,
          "404": error("NotFound"),
          "409": error("Conflict"),
        },
      },
    },
    "/queues/{queue}/jobs/{id}/retry": {
      parameters: [queueParam, idParam],
      post: {
        summary: "Retry a failed or completed job (admin), as BullMQ's job.retry",
        requestBody: {
          required: false,
          content: {
            "application/json": {
              schema: {
                type: "object",
                additionalProperties: false,
                properties: {
                  state: {
                    enum: ["failed", "completed"],
                    description: "Default: whichever finished set holds the job",
                  },
                  resetAttemptsMade: { type: "boolean" },
                  resetAttemptsStarted: { type: "boolean" },
                },
              },
            },
          },
        },
        responses: {
          "200": json(
            {
              type: "object",
              properties: {
                id: { type: "string" },
                state: { enum: ["waiting", "prioritized"] },
                prev: { enum: ["failed", "completed"] },
              },
            },
            "Back in line",
          ),
          ...admin,
          "404": error("NotFound"),
          "409": error("Conflict"),
          "413": error("PayloadTooLarge"),
          "415": error("UnsupportedMediaType"),
        },
      },
    },
    "/queues/{queue}": {
      parameters: [queueParam],
      get: {
        summary: "Job counts by state and whether the queue is paused",
        responses: {
          "200": json(
            {
              type: "object",
              properties: {
                name: { type: "string" },
                counts: { type: "object", additionalProperties: { type: "integer" } },
                paused: { type: "boolean" },
              },
            },
            "The queue",
          ),
          ...common,
          "404": error("NotFound"),
        },
      },
    },
    "/queues/{queue}/pause": {
      parameters: [queueParam],
      post: {
        summary: "Pause the queue for every worker (admin)",
        responses: { "200": json(ref("PauseState"), "Paused"), ...admin, "404": error("NotFound") },
      },
    },
    "/queues/{queue}/resume": {
      parameters: [queueParam],
      post: {
        summary: "Resume the queue (admin)",
        responses: { "200": json(ref("PauseState"), "Resumed"), ...admin, "404": error("NotFound") },
      },
    },
    "/queues/{queue}/redrive": {
      parameters: [queueParam],
      post: {
        summary:
          "Move the queue's dead letters back into it as new jobs (admin): original name, data and options, fresh attempts",
        requestBody: {
          required: false,
          content: {
            "application/json": {
              schema: {
                type: "object",
                additionalProperties: false,
                properties: {
                  count: {
                    type: "integer",
                    minimum: 1,
                    maximum: maxRedriveCount,
                    default: defaultRedriveCount,
                  },
                  deadLetterQueue: {
                    ...queueNameSchema,
                    description: "The dead-letter queue to read (default `<queue>-dlq`); a queue name",
                  },
                },
              },
            },
          },
        },
        responses: {
          "200": json(
            {
              type: "object",
              properties: {
                name: { type: "string" },
                deadLetterQueue: { type: "string" },
                redriven: { type: "integer" },
                jobs: {
                  type: "array",
                  items: {
                    type: "object",
                    properties: { id: { type: "string" }, deadLetterId: { type: "string" } },
                  },
                },
                more: { type: "boolean", description: "count was reached: more dead letters may be left" },
              },
            },
            "Redriven",
          ),
          ...admin,
          "404": error("NotFound"),
          "413": error("PayloadTooLarge"),
          "415": error("UnsupportedMediaType"),
        },
      },
    },
    ...maintenancePaths,
    "/openapi.json": {
      get: {
        summary: "This document",
        security: [],
        responses: { "200": { description: "OpenAPI 3.1 document" }, "405": error("MethodNotAllowed") },
      },
    },
  },
  components: {
    securitySchemes: {
      bearer: {
        type: "http",
        scheme: "bearer",
        description: "A token from NIMBUSQ_API_TOKENS; admin tokens also manage",
      },
    },
    schemas: {
      Error: errorSchema,
      JobInput: jobInput,
      AddResult: addResult,
      Job: { type: "object", properties: { ...jobProperties, data: {} } },
      JobSummary: { type: "object", properties: jobProperties },
      PauseState: { type: "object", properties: { name: { type: "string" }, paused: { type: "boolean" } } },
    },
    responses: errorResponses,
  },
} as const;
