/** The OpenAPI paths of the maintenance routes (maintenance-routes.ts), merged into openapi.ts. */
import { cleanStates, maxMaintenanceCount } from "./maintenance-routes.ts";
import { queueParam } from "./openapi-schemas.ts";

const error = (name: string) => ({ $ref: `#/components/responses/${name}` });
const responses = (description: string, properties: Record<string, object>) => ({
  "200": {
    description,
    content: {
      "application/json": {
        schema: { type: "object", properties: { name: { type: "string" }, ...properties } },
      },
    },
  },
  "400": error("BadRequest"),
  "401": error("Unauthorized"),
  "403": error("Forbidden"),
  "404": error("NotFound"),
  "405": error("MethodNotAllowed"),
  "413": error("PayloadTooLarge"),
  "415": error("UnsupportedMediaType"),
  "500": error("Internal"),
});
const body = (required: boolean, properties: Record<string, object>, needed: string[] = []) => ({
  required,
  content: {
    "application/json": {
      schema: { type: "object", additionalProperties: false, required: needed, properties },
    },
  },
});
const more = { type: "boolean", description: "count was reached: more jobs may be left" };

export const maintenancePaths = {
  "/queues/{queue}/retry": {
    parameters: [queueParam],
    post: {
      summary:
        "Retry every failed (or completed) job (admin), as BullMQ's queue.retryJobs: back to the head of wait, priority aside",
      requestBody: body(false, {
        state: { enum: ["failed", "completed"], default: "failed" },
        count: {
          type: "integer",
          minimum: 1,
          maximum: maxMaintenanceCount,
          description: "Most jobs to retry (default: all)",
        },
      }),
      responses: responses("Retried", {
        state: { enum: ["failed", "completed"] },
        retried: { type: "integer" },
        more,
      }),
    },
  },
  "/queues/{queue}/clean": {
    parameters: [queueParam],
    post: {
      summary:
        "Delete the jobs of one state at least `grace` ms old (admin), as BullMQ's queue.clean; writes one `cleaned` event",
      requestBody: body(
        true,
        {
          grace: { type: "integer", minimum: 0, description: "Jobs younger than this (ms) stay" },
          limit: {
            type: "integer",
            minimum: 0,
            maximum: maxMaintenanceCount,
            default: 0,
            description: "Most jobs to delete; 0 for all",
          },
          state: { enum: cleanStates },
        },
        ["grace", "state"],
      ),
      responses: responses("Cleaned", { state: { enum: cleanStates }, cleaned: { type: "integer" } }),
    },
  },
  "/queues/{queue}/drain": {
    parameters: [queueParam],
    post: {
      summary:
        "Delete every waiting and prioritized job, and delayed ones with `delayed` (admin), as BullMQ's queue.drain; job schedulers' next runs stay",
      requestBody: body(false, { delayed: { type: "boolean", default: false } }),
      responses: responses("Drained", { delayed: { type: "boolean" }, drained: { type: "integer" } }),
    },
  },
  "/queues/{queue}/promote": {
    parameters: [queueParam],
    post: {
      summary: "Make every delayed job ready now (admin), as BullMQ's queue.promoteJobs",
      requestBody: body(false, {
        count: {
          type: "integer",
          minimum: 1,
          maximum: maxMaintenanceCount,
          description: "Most jobs to promote (default: all)",
        },
      }),
      responses: responses("Promoted", { promoted: { type: "integer" }, more }),
    },
  },
};
