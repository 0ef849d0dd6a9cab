/** `GET /queues/:queue` (counts and pause state) and the admin routes that pause and resume it. */
import type { Hono } from "hono";
import * as z from "zod/mini";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { adminOnly } from "./middleware.ts";
import type { QueueAccess } from "./queue-access.ts";
import { adminSecurity, jsonAnswer, jsonBody, namedQueue, queueParams } from "./route-parts.ts";
import { doc, named } from "./schema-docs.ts";
import { validBody } from "./validation.ts";

const queueInfo = named(
  "QueueInfo",
  z.object({
    name: z.string(),
    counts: doc(z.record(z.string(), z.int()), { description: "Jobs per state" }),
    paused: z.boolean(),
  }),
  { example: { name: "email", counts: { waiting: 3, active: 1, completed: 120, failed: 2 }, paused: false } },
);

const pauseState = named("PauseState", z.object({ name: z.string(), paused: z.boolean() }), {
  example: { name: "email", paused: true },
});

/**
 * Pause and resume take no options yet. A body is still read like any other (within the limit, as
 * JSON), so a client that sends one learns at once that a field it meant does nothing.
 */
const noOptions = doc(z.strictObject({}, { error: "an empty object {}" }), { example: {} });
const noOptionsBody = () =>
  jsonBody("NoOptions", noOptions, false, "Takes no options: no body, or {}; any field answers 400");

export const getQueueRoute = {
  method: "get",
  path: "/queues/{queue}",
  operationId: "getQueue",
  tags: ["queues"],
  summary: "Job counts by state and whether the queue is paused",
  request: { params: queueParams },
  responses: { 200: jsonAnswer("The queue", queueInfo), ...errorResponses({}) },
} satisfies ApiRoute;

export const pauseQueueRoute = {
  method: "post",
  path: "/queues/{queue}/pause",
  operationId: "pauseQueue",
  tags: ["queues"],
  summary: "Pause the queue for every worker (admin)",
  security: adminSecurity,
  request: { params: queueParams, body: noOptionsBody() },
  responses: {
    200: jsonAnswer("Paused", pauseState),
    ...errorResponses({ admin: true, body: true }),
  },
} satisfies ApiRoute;

export const resumeQueueRoute = {
  method: "post",
  path: "/queues/{queue}/resume",
  operationId: "resumeQueue",
  tags: ["queues"],
  summary: "Resume the queue (admin); its waiting jobs are ready again",
  security: adminSecurity,
  request: { params: queueParams, body: noOptionsBody() },
  responses: {
    200: jsonAnswer("Resumed", pauseState),
    ...errorResponses({ admin: true, body: true }),
  },
} satisfies ApiRoute;

export function addQueueRoutes(app: Hono<AppEnv>, access: QueueAccess): void {
  const noBody = (c: Parameters<typeof validBody>[0]) =>
    validBody(c, noOptions, { required: false, limit: access.settings.maxBodyBytes });

  mount(app, getQueueRoute, [namedQueue(access)], async (c) => {
    const queue = c.get("queue");
    const [counts, paused] = await Promise.all([queue.getJobCounts(), queue.isPaused()]);
    return c.json({ name: queue.name, counts, paused }, 200);
  });

  mount(app, pauseQueueRoute, [adminOnly, namedQueue(access)], async (c) => {
    const queue = c.get("queue");
    await noBody(c);
    await queue.pause();
    return c.json({ name: queue.name, paused: true }, 200);
  });

  mount(app, resumeQueueRoute, [adminOnly, namedQueue(access)], async (c) => {
    const queue = c.get("queue");
    await noBody(c);
    await queue.resume();
    // Jobs that waited through the pause are ready again.
    await access.kick(queue.name);
    return c.json({ name: queue.name, paused: false }, 200);
  });
}
