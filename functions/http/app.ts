/**
 * The HTTP API as one Hono app: the same object serves Lambda (`httpHandler`), Node
 * (`serve({ fetch: app.fetch })` from `@hono/node-server`) and tests (`app.request()`).
 */
import { Hono } from "hono";
import { addEnqueueRoute } from "./enqueue.ts";
import { errorBody, errorCodes, errorResponse, HttpError } from "./http-errors.ts";
import { addJobRoutes } from "./job-routes.ts";
import { addMaintenanceRoutes } from "./maintenance-routes.ts";
import { authenticate } from "./middleware.ts";
import { openApiDocument } from "./openapi.ts";
import { type HttpOptions, resolveHttpOptions } from "./options.ts";
import { type AppEnv, queueAccess } from "./queue-access.ts";
import { addQueueRoutes } from "./queue-routes.ts";
import { addRedriveRoute } from "./redrive-route.ts";

/** Answers 405 (with Allow) for every method a registered path does not handle. */
function refuseOtherMethods(app: Hono<AppEnv>): void {
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
      throw new HttpError(
        405,
        errorCodes.methodNotAllowed,
        `${c.req.method} is not allowed here; allowed: ${allow}`,
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
  const app = new Hono<AppEnv>();
  app.onError((error, c) => errorResponse(c, error, settings.log));
  app.notFound((c) =>
    c.json(
      errorBody(new HttpError(404, errorCodes.notFound, `no route for ${c.req.method} ${c.req.path}`)),
      404,
    ),
  );
  app.use("*", authenticate(settings));
  app.get("/openapi.json", (c) => c.json(openApiDocument));
  addEnqueueRoute(app, access);
  addJobRoutes(app, access);
  addQueueRoutes(app, access);
  addMaintenanceRoutes(app, access);
  addRedriveRoute(app, access);
  refuseOtherMethods(app);
  return app;
}
