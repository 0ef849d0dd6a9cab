/** `GET /queues/:queue` (counts and pause state) and the admin routes that pause and resume it. */
import type { Hono } from "hono";
import { fieldsOf } from "./maintenance-routes.ts";
import { adminOnly } from "./middleware.ts";
import type { AppEnv, QueueAccess } from "./queue-access.ts";
import { readJsonBody } from "./request-body.ts";

export function addQueueRoutes(app: Hono<AppEnv>, access: QueueAccess): void {
  app.get("/queues/:queue", async (c) => {
    const queue = access.queue(c);
    const [counts, paused] = await Promise.all([queue.getJobCounts(), queue.isPaused()]);
    return c.json({ name: queue.name, counts, paused });
  });

  app.post("/queues/:queue/pause", adminOnly, async (c) => {
    const queue = access.queue(c);
    // No options yet; a body, if sent, must still be JSON within the limit, and `{}`.
    fieldsOf(await readJsonBody(c.req.raw, access.settings.maxBodyBytes, false), [], "a pause");
    await queue.pause();
    return c.json({ name: queue.name, paused: true });
  });

  app.post("/queues/:queue/resume", adminOnly, async (c) => {
    const queue = access.queue(c);
    fieldsOf(await readJsonBody(c.req.raw, access.settings.maxBodyBytes, false), [], "a resume");
    await queue.resume();
    // Jobs that waited through the pause are ready again.
    await access.kick(queue.name);
    return c.json({ name: queue.name, paused: false });
  });
}
