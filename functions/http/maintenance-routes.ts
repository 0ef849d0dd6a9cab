/**
 * The admin routes for queue-wide maintenance, each one Queue call (core/queue/maintenance.ts) that works in
 * bounded steps: `POST /queues/:queue/retry` (failed or completed jobs back to wait), `…/clean` (old
 * jobs of one state deleted), `…/drain` (waiting, prioritized and optionally delayed jobs deleted) and
 * `…/promote` (delayed jobs made ready). Each answers the number of jobs it handled.
 */
import type { Hono } from "hono";
import type { CleanState } from "../../core/index.ts";
import { invalid } from "./http-errors.ts";
import { adminOnly } from "./middleware.ts";
import type { AppEnv, QueueAccess } from "./queue-access.ts";
import { readJsonBody } from "./request-body.ts";

export const cleanStates: readonly CleanState[] = [
  "completed",
  "failed",
  "wait",
  "waiting",
  "active",
  "paused",
  "delayed",
  "prioritized",
];

/**
 * Most jobs one retry, promote or clean request handles when it gives a count (core works in steps of
 * at most 10,000; a request must end within the API's time limit). Leave the count out for all.
 */
export const maxMaintenanceCount = 100_000;

/** The body as an object holding only `allowed` fields (an empty body is `{}`). */
export function fieldsOf(body: unknown, allowed: readonly string[], what: string): Record<string, unknown> {
  if (body === undefined) return {};
  const takes = allowed.length > 0 ? allowed.join(", ") : "no fields";
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("body", `the body must be an object { ${allowed.join(", ")} }`);
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw invalid(field, `unknown field "${field}": ${what} takes ${takes}`);
  }
  return body as Record<string, unknown>;
}

function integerField(
  fields: Record<string, unknown>,
  field: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const value = fields[field];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max)
    throw invalid(
      field,
      max === Number.MAX_SAFE_INTEGER
        ? `${field} must be an integer of at least ${min}`
        : `${field} must be an integer from ${min} to ${max}`,
    );
  return value;
}

function oneOf<T extends string>(fields: Record<string, unknown>, field: string, allowed: readonly T[]): T {
  const value = fields[field];
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value))
    throw invalid(field, `${field} must be one of ${allowed.join(", ")}`);
  return value as T;
}

export function addMaintenanceRoutes(app: Hono<AppEnv>, access: QueueAccess): void {
  const body = (request: Request) => readJsonBody(request, access.settings.maxBodyBytes, false);

  app.post("/queues/:queue/retry", adminOnly, async (c) => {
    const queue = access.queue(c);
    const fields = fieldsOf(await body(c.req.raw), ["state", "count"], "a retry");
    const state = fields.state === undefined ? "failed" : oneOf(fields, "state", ["failed", "completed"]);
    const count = integerField(fields, "count", 1, maxMaintenanceCount);
    const retried = await queue.retryJobs({ state, ...(count === undefined ? {} : { limit: count }) });
    if (retried > 0) await access.kick(queue.name);
    return c.json({ name: queue.name, state, retried, more: count !== undefined && retried === count });
  });

  app.post("/queues/:queue/clean", adminOnly, async (c) => {
    const queue = access.queue(c);
    const fields = fieldsOf(await body(c.req.raw), ["grace", "limit", "state"], "a clean");
    const grace = integerField(fields, "grace", 0);
    if (grace === undefined) throw invalid("grace", "grace (ms) is required: jobs younger than it stay");
    const state = oneOf(fields, "state", cleanStates);
    const limit = integerField(fields, "limit", 0, maxMaintenanceCount) ?? 0;
    const ids = await queue.clean(grace, limit, state);
    return c.json({ name: queue.name, state, cleaned: ids.length });
  });

  app.post("/queues/:queue/drain", adminOnly, async (c) => {
    const queue = access.queue(c);
    const fields = fieldsOf(await body(c.req.raw), ["delayed"], "a drain");
    const delayed = fields.delayed ?? false;
    if (typeof delayed !== "boolean") throw invalid("delayed", "delayed must be a boolean");
    const drained = await queue.drain(delayed);
    return c.json({ name: queue.name, delayed, drained });
  });

  app.post("/queues/:queue/promote", adminOnly, async (c) => {
    const queue = access.queue(c);
    const fields = fieldsOf(await body(c.req.raw), ["count"], "a promote");
    const count = integerField(fields, "count", 1, maxMaintenanceCount);
    const promoted = await queue.promoteJobs(count === undefined ? {} : { limit: count });
    if (promoted > 0) await access.kick(queue.name);
    return c.json({ name: queue.name, promoted, more: count !== undefined && promoted === count });
  });
}
