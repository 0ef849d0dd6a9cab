/**
 * `POST /queues/:queue/jobs/:id/cancel` (admin): cancels a job from anywhere (core/job/cancel.ts). A
 * waiting, delayed or prioritized job ends failed now with the reason; a running one is aborted by its
 * nimbusq worker at that worker's next lease extension. A finished job answers 409, an unknown one 404.
 */
import type { Hono } from "hono";
import * as z from "zod/mini";
import { maxCancelReasonLength } from "../../core/index.ts";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { errorCodes, HttpError } from "./http-errors.ts";
import { adminOnly } from "./middleware.ts";
import type { QueueAccess } from "./queue-access.ts";
import { adminSecurity, jobParams, jsonAnswer, jsonBody, namedQueue } from "./route-parts.ts";
import { doc, named, optional } from "./schema-docs.ts";
import { validBody } from "./validation.ts";

const cancelBody = doc(
  z.strictObject(
    {
      reason: optional(
        z
          .string({ error: `a string of 1 to ${maxCancelReasonLength} characters` })
          .check(z.minLength(1), z.maxLength(maxCancelReasonLength)),
        { description: 'The failedReason the job ends with (default "cancelled")' },
      ),
    },
    { error: "an object { reason }" },
  ),
  { example: { reason: "the customer closed the account" } },
);

const cancelled = named(
  "CancelledJob",
  z.object({
    id: z.string(),
    outcome: doc(z.enum(["cancelled", "signalled", "recorded"]), {
      description:
        "cancelled: it waited and is failed now; signalled: a nimbusq worker runs it and aborts it at its next lease extension (within half the lease), then fails it with the reason unless its processor returns; recorded: a worker nimbusq cannot reach (BullMQ's) runs it, and it ends as that worker ends it",
    }),
    prev: doc(z.string(), { description: "The job's state before the cancel" }),
  }),
  { example: { id: "signup-42", outcome: "cancelled", prev: "delayed" } },
);

export const cancelJobRoute = {
  method: "post",
  path: "/queues/{queue}/jobs/{id}/cancel",
  operationId: "cancelJob",
  tags: ["jobs"],
  summary: "Cancel a job (admin): a waiting one fails now, a running one is aborted where it runs",
  security: adminSecurity,
  request: {
    params: jobParams,
    body: jsonBody("CancelJobRequest", cancelBody, false, "Optional; an empty body is {}"),
  },
  responses: {
    200: jsonAnswer("Cancelled, or on its way", cancelled),
    ...errorResponses({
      admin: true,
      body: true,
      extra: { 404: [errorCodes.jobNotFound], 409: [errorCodes.wrongState] },
    }),
  },
} satisfies ApiRoute;

export function addCancelRoute(app: Hono<AppEnv>, access: QueueAccess): void {
  mount(app, cancelJobRoute, [adminOnly, namedQueue(access)], async (c) => {
    const queue = c.get("queue");
    const { reason } = await validBody(c, cancelBody, {
      required: false,
      limit: access.settings.maxBodyBytes,
    });
    const id = access.jobId(c);
    const result = await queue.cancelJob(id, reason);
    if (result.outcome === "finished") {
      const message = `job "${id}" in queue "${queue.name}" is ${result.state}: there is nothing to cancel`;
      throw new HttpError(409, errorCodes.wrongState, message);
    }
    return c.json({ id, outcome: result.outcome, prev: result.state }, 200);
  });
}
