/**
 * The admin routes for queue-wide maintenance, each one Queue call (core/queue/maintenance.ts) that works in
 * bounded steps: `POST /queues/:queue/retry` (failed or completed jobs back to wait), `…/clean` (old
 * jobs of one state deleted), `…/drain` (waiting, prioritized and optionally delayed jobs deleted) and
 * `…/promote` (delayed jobs made ready). Each answers the number of jobs it handled.
 */
import type { Hono } from "hono";
import * as z from "zod/mini";
import { cleanStates } from "../../core/index.ts";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { adminOnly } from "./middleware.ts";
import type { QueueAccess } from "./queue-access.ts";
import { adminSecurity, jsonAnswer, jsonBody, namedQueue, queueParams } from "./route-parts.ts";
import { doc, named, optional } from "./schema-docs.ts";
import { flag, integer, oneOf } from "./schema-rules.ts";
import { validBody } from "./validation.ts";

/**
 * Most jobs one retry, promote or clean request handles when it gives a count (core works in steps of
 * at most 10,000; a request must end within the API's time limit). Leave the count out for all.
 */
export const maxMaintenanceCount = 100_000;

const finished = ["failed", "completed"] as const;
const count = (what: string) =>
  optional(integer(1, maxMaintenanceCount), { description: `Most jobs to ${what} (default: all)` });
const more = doc(z.boolean(), { description: "count was reached: more jobs may be left" });
const strict = <T extends z.core.$ZodLooseShape>(fields: T, example: object) =>
  doc(z.strictObject(fields, { error: `an object { ${Object.keys(fields).join(", ")} }` }), { example });

const bodies = {
  retry: strict({ state: z._default(oneOf(finished), "failed"), count: count("retry") }, { count: 500 }),
  clean: strict(
    {
      grace: doc(integer(0), { description: "Jobs younger than this (ms) stay" }),
      limit: doc(z._default(integer(0, maxMaintenanceCount), 0), {
        description: "Most jobs to delete; 0 for all",
      }),
      state: oneOf(cleanStates),
    },
    { grace: 86_400_000, state: "completed" },
  ),
  drain: strict({ delayed: z._default(flag(), false) }, { delayed: true }),
  promote: strict({ count: count("promote") }, { count: 100 }),
};

const answer = <T extends z.core.$ZodLooseShape>(name: string, fields: T, example: object) =>
  named(name, z.object({ name: z.string(), ...fields }), { example: { name: "email", ...example } });

function maintenanceRoute(
  action: keyof typeof bodies,
  spec: {
    operationId: string;
    summary: string;
    body: z.ZodMiniType;
    required: boolean;
    answer: z.ZodMiniType;
  },
): ApiRoute {
  const name = `${action[0]?.toUpperCase()}${action.slice(1)}`;
  return {
    method: "post",
    path: `/queues/{queue}/${action}`,
    operationId: spec.operationId,
    tags: ["maintenance"],
    summary: spec.summary,
    security: adminSecurity,
    request: {
      params: queueParams,
      body: jsonBody(`${name}Request`, spec.body, spec.required, spec.required ? "Required" : "Optional"),
    },
    responses: {
      200: jsonAnswer(`${name} done`, spec.answer),
      ...errorResponses({ admin: true, body: true }),
    },
  };
}

export const retryJobsRoute = maintenanceRoute("retry", {
  operationId: "retryJobs",
  summary:
    "Retry every failed (or completed) job (admin), as BullMQ's queue.retryJobs: back to the head of wait, priority aside",
  body: bodies.retry,
  required: false,
  answer: answer(
    "RetryJobsResult",
    { state: z.enum(finished), retried: z.int(), more },
    { state: "failed", retried: 12, more: false },
  ),
});

export const cleanRoute = maintenanceRoute("clean", {
  operationId: "cleanJobs",
  summary:
    "Delete the jobs of one state at least `grace` ms old (admin), as BullMQ's queue.clean; writes one `cleaned` event",
  body: bodies.clean,
  required: true,
  answer: answer(
    "CleanResult",
    { state: z.enum(cleanStates), cleaned: z.int() },
    { state: "completed", cleaned: 40 },
  ),
});

export const drainRoute = maintenanceRoute("drain", {
  operationId: "drainQueue",
  summary:
    "Delete every waiting and prioritized job, and delayed ones with `delayed` (admin), as BullMQ's queue.drain; job schedulers' next runs stay",
  body: bodies.drain,
  required: false,
  answer: answer("DrainResult", { delayed: z.boolean(), drained: z.int() }, { delayed: true, drained: 7 }),
});

export const promoteRoute = maintenanceRoute("promote", {
  operationId: "promoteJobs",
  summary: "Make every delayed job ready now (admin), as BullMQ's queue.promoteJobs",
  body: bodies.promote,
  required: false,
  answer: answer("PromoteResult", { promoted: z.int(), more }, { promoted: 3, more: false }),
});

export function addMaintenanceRoutes(app: Hono<AppEnv>, access: QueueAccess): void {
  const admin = [adminOnly, namedQueue(access)];
  // Clean's body is required in the document; an empty one still names `grace` (400), as it always did.
  const body = <S extends z.ZodMiniType>(c: Parameters<typeof validBody>[0], schema: S) =>
    validBody(c, schema, { required: false, limit: access.settings.maxBodyBytes });

  mount(app, retryJobsRoute, admin, async (c) => {
    const queue = c.get("queue");
    const { state, count } = await body(c, bodies.retry);
    const retried = await queue.retryJobs({ state, ...(count === undefined ? {} : { limit: count }) });
    if (retried > 0) await access.kick(queue.name);
    return c.json({ name: queue.name, state, retried, more: count !== undefined && retried === count }, 200);
  });

  mount(app, cleanRoute, admin, async (c) => {
    const queue = c.get("queue");
    const { grace, limit, state } = await body(c, bodies.clean);
    const ids = await queue.clean(grace, limit, state);
    return c.json({ name: queue.name, state, cleaned: ids.length }, 200);
  });

  mount(app, drainRoute, admin, async (c) => {
    const queue = c.get("queue");
    const { delayed } = await body(c, bodies.drain);
    const drained = await queue.drain(delayed);
    return c.json({ name: queue.name, delayed, drained }, 200);
  });

  mount(app, promoteRoute, admin, async (c) => {
    const queue = c.get("queue");
    const { count } = await body(c, bodies.promote);
    const promoted = await queue.promoteJobs(count === undefined ? {} : { limit: count });
    if (promoted > 0) await access.kick(queue.name);
    return c.json({ name: queue.name, promoted, more: count !== undefined && promoted === count }, 200);
  });
}
