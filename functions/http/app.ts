/**
 * The HTTP API as one Hono app: the same object serves Lambda (`httpHandler`), Node
 * (`serve({ fetch: app.fetch })` from `@hono/node-server`) and tests (`app.request()`).
 */
import type { Hono } from "hono";
import { HonoBase } from "hono/hono-base";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { mount } from "./api-route.ts";
import type { AppEnv } from "./app-env.ts";
import { addCancelRoute } from "./cancel-route.ts";
import { corsMiddleware, preflightResponse } from "./cors.ts";
import { addEnqueueRoute } from "./enqueue.ts";
import { addGroupRoutes } from "./group-routes.ts";
import { errorBody, errorCodes, errorResponse, HttpError } from "./http-errors.ts";
import { addJobListRoute } from "./job-list-route.ts";
import { addJobRoutes } from "./job-routes.ts";
import { addMaintenanceRoutes } from "./maintenance-routes.ts";
import { authenticate } from "./middleware.ts";
import { openApiRoute } from "./openapi-route.ts";
import { type HttpOptions, type HttpSettings, resolveHttpOptions } from "./options.ts";
import { queueAccess } from "./queue-access.ts";
import { addQueueRoutes } from "./queue-routes.ts";
import { addRedriveRoute } from "./redrive-route.ts";
import { servedDocument } from "./served-document.ts";

const methodToken = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;

/**
 * Answers 405 (with Allow) for every method a registered path does not handle, whatever the method
 * (unknown ones included), and a CORS preflight (let through by the cors middleware) with the same list.
 */
function refuseOtherMethods(app: Hono<AppEnv>, settings: HttpSettings): void {
  const allowed = new Map<string, Set<string>>();
  for (const { method, path } of app.routes) {
    if (method === "ALL") continue;
    allowed.set(path, (allowed.get(path) ?? new Set()).add(method));
  }
  for (const [path, methods] of allowed) {
    // Hono answers HEAD with the GET route.
    if (methods.has("GET")) methods.add("HEAD");
    const allow = [...methods].join(", ");
    app.all(path, (c) => {
      if (settings.cors && c.get("preflight")) return preflightResponse(c, allow, settings.cors.maxAge);
      const method = methodToken.test(c.req.method) ? c.req.method : "this method";
      throw new HttpError(
        405,
        errorCodes.methodNotAllowed,
        `${method} is not allowed here; allowed: ${allow}`,
        undefined,
        { Allow: allow },
      );
    });
  }
}

/**
 * @example
 * const app = createHttpApp({ redis: createRedis(), tokens: [{ token: "s3cret", admin: true }], queues: ["email"] });
 * const res = await app.request("/queues/email", { headers: { authorization: "Bearer s3cret" } });
 */
export function createHttpApp(options: HttpOptions): Hono<AppEnv> {
  const settings = resolveHttpOptions(options);
  const access = queueAccess(settings);
  // RegExpRouter alone: strict paths (a trailing slash is another path) as Hono's default router,
  // without the TrieRouter the default carries for route shapes this API never uses.
  const app: Hono<AppEnv> = new HonoBase<AppEnv>({ router: new RegExpRouter() });
  app.onError((error, c) => errorResponse(c, error, settings.log));
  app.notFound((c) =>
    c.json(
      errorBody(new HttpError(404, errorCodes.notFound, `no route for ${c.req.method} ${c.req.path}`)),
      404,
    ),
  );
  if (settings.cors) app.use("*", corsMiddleware(settings.cors));
  app.use("*", authenticate(settings));
  // Built (or, in the Lambda bundle, unpacked) on the first request for it, then kept: a cold start
  // that never serves it pays nothing.
  let document: ReturnType<typeof servedDocument> | undefined;
  mount(app, openApiRoute, [], async (c) => {
    document ??= servedDocument(settings.servers);
    return c.json(await document, 200);
  });
  addEnqueueRoute(app, access);
  addJobListRoute(app, access);
  addJobRoutes(app, access);
  addCancelRoute(app, access);
  addQueueRoutes(app, access);
  addGroupRoutes(app, access);
  addMaintenanceRoutes(app, access);
  addRedriveRoute(app, access);
  refuseOtherMethods(app, settings);
  return app;
}
