/**
 * A queue's groups (BullMQ Pro's groups, docs/groups.md): `GET /queues/:queue/groups` lists them with
 * their counts, a page at a time; `POST /queues/:queue/groups/:group/pause` and `/resume` (admin)
 * hold one group or let it go again.
 */
import type { Hono } from "hono";
import * as z from "zod/mini";
import { type ApiRoute, mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponses } from "./error-schemas.ts";
import { adminOnly } from "./middleware.ts";
import type { QueueAccess } from "./queue-access.ts";
import { adminSecurity, jsonAnswer, namedQueue, queueParams } from "./route-parts.ts";
import { doc, named, optional } from "./schema-docs.ts";
import { queryInteger } from "./schema-rules.ts";

const pageSize = 100;

const groupSummary = named(
  "GroupSummary",
  z.object({
    id: z.string(),
    status: doc(z.enum(["waiting", "maxed", "limited", "paused", "active", "empty"]), {
      description:
        "waiting: ready jobs, served in turn; maxed: ready jobs, as many running as group.concurrency allows; limited: ready jobs held by a rate limit; paused; active: none ready, some running; empty",
    }),
    waiting: doc(z.int(), { description: "Ready jobs of the group (delayed ones once due)" }),
    active: doc(z.int(), { description: "Jobs of the group running now" }),
  }),
  { example: { id: "tenant-42", status: "waiting", waiting: 12, active: 2 } },
);

const query = z.object({
  start: optional(queryInteger("a non-negative integer", 10 ** 15 - 1), {
    description: "Index of the first group (sorted by id), from 0",
    default: 0,
  }),
});

const groupPage = named(
  "GroupPage",
  z.object({
    start: z.int(),
    groups: doc(z.array(groupSummary), {
      description: `At most ${pageSize} groups (with ready jobs, paused or running), by id; a full page may have a next one`,
    }),
  }),
);

const groupParams = z.object({
  queue: queueParams.shape.queue,
  group: doc(z.string().check(z.minLength(1)), {
    param: { description: "The group id (opts.group.id); no ':'" },
    example: "tenant-42",
  }),
});

const groupState = named(
  "GroupPauseState",
  z.object({ id: z.string(), paused: z.boolean(), changed: z.boolean() }),
  {
    example: { id: "tenant-42", paused: true, changed: true },
  },
);

export const listGroupsRoute = {
  method: "get",
  path: "/queues/{queue}/groups",
  operationId: "listGroups",
  tags: ["queues"],
  summary: "The queue's groups with their counts, a page at a time",
  request: { params: queueParams, query },
  responses: { 200: jsonAnswer("A page of groups", groupPage), ...errorResponses({}) },
} satisfies ApiRoute;

const groupControl = (verb: "pause" | "resume") =>
  ({
    method: "post",
    path: `/queues/{queue}/groups/{group}/${verb}`,
    operationId: `${verb}Group`,
    tags: ["queues"],
    summary:
      verb === "pause"
        ? "Pause one group (admin): its jobs wait, the other groups go on"
        : "Resume one group (admin): it is served in turn again",
    security: adminSecurity,
    request: { params: groupParams },
    responses: {
      200: jsonAnswer(verb === "pause" ? "Paused" : "Resumed", groupState),
      ...errorResponses({ admin: true }),
    },
  }) satisfies ApiRoute;

export const pauseGroupRoute = groupControl("pause");
export const resumeGroupRoute = groupControl("resume");

export function addGroupRoutes(app: Hono<AppEnv>, access: QueueAccess): void {
  mount(app, listGroupsRoute, [namedQueue(access)], async (c, { query: asked }) => {
    const queue = c.get("queue");
    const start = asked.start ?? 0;
    const groups = await queue.getGroups(start, start + pageSize - 1);
    return c.json({ start, groups }, 200);
  });
  for (const route of [pauseGroupRoute, resumeGroupRoute]) {
    mount(app, route, [adminOnly, namedQueue(access)], async (c, { params }) => {
      const queue = c.get("queue");
      const paused = route === pauseGroupRoute;
      const changed = paused ? await queue.pauseGroup(params.group) : await queue.resumeGroup(params.group);
      if (!paused && changed) await access.kick(queue.name);
      return c.json({ id: params.group, paused, changed }, 200);
    });
  }
}
