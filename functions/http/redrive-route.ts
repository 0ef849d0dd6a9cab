/**
 * `POST /queues/:queue/redrive` (admin): moves the queue's dead letters back into it as new jobs
 * (core/dead-letter/redrive.ts), from `deadLetterQueue` (default `<queue>-dlq`), at most `count` of them.
 */
import type { Hono } from "hono";
import { defaultDeadLetterQueue, ValidationError } from "../../core/index.ts";
import { checkQueueName } from "../../core/internal.ts";
import { errorCodes, HttpError, invalid } from "./http-errors.ts";
import { adminOnly } from "./middleware.ts";
import type { AppEnv, QueueAccess } from "./queue-access.ts";
import { readJsonBody } from "./request-body.ts";

/** Most dead letters one request moves (a request must end within the API's time limit). */
export const maxRedriveCount = 10_000;
export const defaultRedriveCount = 1000;

function redriveRequest(body: unknown, queue: string): { count: number; from: string } {
  if (body === undefined) return { count: defaultRedriveCount, from: defaultDeadLetterQueue(queue) };
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("body", "the body must be an object { count, deadLetterQueue }");
  const fields = body as Record<string, unknown>;
  for (const field of Object.keys(fields)) {
    if (field !== "count" && field !== "deadLetterQueue")
      throw invalid(field, `unknown field "${field}": a redrive takes count, deadLetterQueue`);
  }
  const count = fields.count ?? defaultRedriveCount;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > maxRedriveCount)
    throw invalid("count", `count must be an integer from 1 to ${maxRedriveCount}`);
  const from = fields.deadLetterQueue ?? defaultDeadLetterQueue(queue);
  try {
    checkQueueName(from, "deadLetterQueue");
  } catch (error) {
    if (error instanceof ValidationError)
      throw invalid("deadLetterQueue", `deadLetterQueue must be ${error.rule}`);
    throw error;
  }
  if (from === queue) throw invalid("deadLetterQueue", "deadLetterQueue must be another queue");
  return { count, from: from as string };
}

export function addRedriveRoute(app: Hono<AppEnv>, access: QueueAccess): void {
  app.post("/queues/:queue/redrive", adminOnly, async (c) => {
    const queue = access.queue(c);
    const body = await readJsonBody(c.req.raw, access.settings.maxBodyBytes, false);
    const { count, from } = redriveRequest(body, queue.name);
    const allowed = access.settings.queues;
    if (allowed && !allowed.has(from))
      throw new HttpError(404, errorCodes.unknownQueue, `unknown queue "${from}"`, "deadLetterQueue");
    const result = await queue.redrive({ from, count });
    if (result.count > 0) await access.kick(queue.name);
    return c.json({
      name: queue.name,
      deadLetterQueue: from,
      redriven: result.count,
      jobs: result.jobs,
      more: result.more,
    });
  });
}
