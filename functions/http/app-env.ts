/** The Hono environment of the HTTP app (its own module: cors, options and the routes all use it). */
import type { Queue } from "../../core/index.ts";

/** The Hono environment of the app: what the auth middleware leaves for the routes. */
export interface AppEnv {
  /**
   * `preflight`: the request is a CORS preflight the cors middleware let through to its route;
   * `queue`: the queue the path names, once route-parts.ts's `namedQueue` has checked it.
   */
  Variables: { admin: boolean; preflight: boolean; queue: Queue };
}
