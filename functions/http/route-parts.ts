/**
 * What the route modules share to declare their operations: the path parameters, how a JSON request
 * body and a JSON answer are declared, the security of admin operations, and the middleware that
 * resolves the queue the path names before any other check (so a queue outside the allow-list answers
 * 404 whatever else is wrong, as it always did).
 *
 * Request bodies are declared by name (the document lists each as a component and refers to it), and
 * `validBody` checks them after reading the body within the size limit, with the API's own
 * 413/415/invalid_json answers.
 */
import type { MiddlewareHandler } from "hono";
import * as z from "zod/mini";
import type { RequestBodySpec, ResponseSpec } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import type { QueueAccess } from "./queue-access.ts";
import { doc } from "./schema-docs.ts";
import { queueName } from "./schema-rules.ts";

/** The security requirement of operations that need an admin token (see openapi.ts). */
export const adminSecurity = [{ adminToken: [] }];

const queueParam = doc(queueName, {
  param: { description: "The queue; 404 unknown_queue when the API's allow-list lacks it" },
});

export const queueParams = z.object({ queue: queueParam });

export const jobParams = z.object({
  queue: queueParam,
  id: doc(z.string().check(z.minLength(1)), {
    param: {
      description:
        "The job id. Ids that name one of the queue's own keys (meta, wait, 1:lock, …) answer 404; dead letters (dl:…) and scheduler iterations (repeat:…) are readable",
    },
    example: "signup-42",
  }),
});

/** A JSON request body, listed in the document as the component `name`. */
export function jsonBody(
  name: string,
  schema: z.ZodMiniType,
  required: boolean,
  description: string,
): RequestBodySpec {
  return { name, schema, required, description };
}

/** A JSON answer. */
export function jsonAnswer(description: string, schema: z.ZodMiniType): ResponseSpec {
  return { description, schema };
}

/** Resolves the path's queue (400 for a name core refuses, 404 outside the allow-list) for the handler. */
export function namedQueue(access: QueueAccess): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set("queue", access.queue(c));
    await next();
  };
}
