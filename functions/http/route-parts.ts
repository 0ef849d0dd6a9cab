/**
 * What the route modules share to declare their operations: the path parameters, how a JSON request
 * body and a JSON answer are declared, the security of admin operations, and the middleware that
 * resolves the queue the path names before any other check (so a queue outside the allow-list answers
 * 404 whatever else is wrong, as it always did).
 *
 * Request bodies are declared by reference (`$ref`) and their zod schemas kept in `requestBodies` for
 * the document: `validBody` checks them after reading the body within the size limit, with the API's
 * own 413/415/invalid_json answers, which the library's own body validator would not give.
 */
import { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.ts";
import type { QueueAccess } from "./queue-access.ts";
import { queueName } from "./schema-rules.ts";

/** The security requirement of operations that need an admin token (see openapi.ts). */
export const adminSecurity = [{ adminToken: [] }];

const queueParam = queueName.openapi({
  param: {
    name: "queue",
    in: "path",
    description: "The queue; 404 unknown_queue when the API's allow-list lacks it",
  },
});

export const queueParams = z.object({ queue: queueParam });

export const jobParams = z.object({
  queue: queueParam,
  id: z
    .string()
    .min(1)
    .openapi({
      param: {
        name: "id",
        in: "path",
        description:
          "The job id. Ids that name one of the queue's own keys (meta, wait, 1:lock, …) answer 404; dead letters (dl:…) and scheduler iterations (repeat:…) are readable",
      },
      example: "signup-42",
    }),
});

/** Zod schemas of the request bodies, by component name, for openapi.ts to register. */
export const requestBodies = new Map<string, z.ZodType>();

/** A JSON request body declared by reference to the named schema. */
export function jsonBody(name: string, schema: z.ZodType, required: boolean, description: string) {
  requestBodies.set(name, schema);
  return {
    required,
    description,
    content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` } } },
  };
}

/** A JSON answer. */
export function jsonAnswer<S extends z.ZodType>(description: string, schema: S) {
  return { description, content: { "application/json": { schema } } };
}

/** Resolves the path's queue (400 for a name core refuses, 404 outside the allow-list) for the handler. */
export function namedQueue(access: QueueAccess): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set("queue", access.queue(c));
    await next();
  };
}
