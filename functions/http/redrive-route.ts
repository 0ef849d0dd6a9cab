/**
 * `POST /queues/:queue/redrive` (admin): moves the queue's dead letters back into it as new jobs
 * (core/dead-letter/redrive.ts), from `deadLetterQueue` (default `<queue>-dlq`), at most `count` of them.
 */
import type { Hono } from "hono";
import * as z from "zod/mini";
import { defaultDeadLetterQueue } from "../../core/index.ts";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { errorCodes, HttpError, invalid } from "./http-errors.ts";
import { adminOnly } from "./middleware.ts";
import type { QueueAccess } from "./queue-access.ts";
import { adminSecurity, jsonAnswer, jsonBody, namedQueue, queueParams } from "./route-parts.ts";
import { doc, named, optional } from "./schema-docs.ts";
import { integer, queueName } from "./schema-rules.ts";
import { validBody } from "./validation.ts";

/** Most dead letters one request moves (a request must end within the API's time limit). */
export const maxRedriveCount = 10_000;
export const defaultRedriveCount = 1000;

const redriveBody = doc(
  z.strictObject(
    {
      count: doc(z._default(integer(1, maxRedriveCount), defaultRedriveCount), {
        description: "Most dead letters to move",
      }),
      deadLetterQueue: optional(queueName, {
        description: "The dead-letter queue to read (default `<queue>-dlq`); another queue",
      }),
    },
    { error: "an object { count, deadLetterQueue }" },
  ),
  { example: { count: 100 } },
);

const redriven = named(
  "RedriveResult",
  z.object({
    name: z.string(),
    deadLetterQueue: z.string(),
    redriven: z.int(),
    jobs: z.array(z.object({ id: z.string(), deadLetterId: z.string() })),
    more: doc(z.boolean(), { description: "count was reached: more dead letters may be left" }),
  }),
  {
    example: {
      name: "email",
      deadLetterQueue: "email-dlq",
      redriven: 1,
      jobs: [{ id: "8", deadLetterId: "dl:email:3" }],
      more: false,
    },
  },
);

export const redriveRoute = {
  method: "post",
  path: "/queues/{queue}/redrive",
  operationId: "redriveDeadLetters",
  tags: ["maintenance"],
  summary:
    "Move the queue's dead letters back into it as new jobs (admin): original name, data and options, fresh attempts",
  security: adminSecurity,
  request: {
    params: queueParams,
    body: jsonBody("RedriveRequest", redriveBody, false, "Optional; an empty body is {}"),
  },
  responses: {
    200: jsonAnswer("Redriven", redriven),
    ...errorResponses({ admin: true, body: true }),
  },
} satisfies ApiRoute;

export function addRedriveRoute(app: Hono<AppEnv>, access: QueueAccess): void {
  mount(app, redriveRoute, [adminOnly, namedQueue(access)], async (c) => {
    const queue = c.get("queue");
    const body = await validBody(c, redriveBody, { required: false, limit: access.settings.maxBodyBytes });
    const { count } = body;
    const from = body.deadLetterQueue ?? defaultDeadLetterQueue(queue.name);
    if (from === queue.name) throw invalid("deadLetterQueue", "deadLetterQueue must be another queue");
    const allowed = access.settings.queues;
    if (allowed && !allowed.has(from))
      throw new HttpError(404, errorCodes.unknownQueue, `unknown queue "${from}"`, "deadLetterQueue");
    const result = await queue.redrive({ from, count });
    if (result.count > 0) await access.kick(queue.name);
    return c.json(
      {
        name: queue.name,
        deadLetterQueue: from,
        redriven: result.count,
        jobs: result.jobs,
        more: result.more,
      },
      200,
    );
  });
}
