/**
 * CORS, off unless configured (`cors` on createHttpApp, `NIMBUSQ_CORS_ORIGINS` in the environment).
 * A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an allowed origin
 * skips authentication — browsers send it without credentials — and is answered 204 by its path's
 * route with the methods that path serves; one from another origin is refused 403. Every other answer
 * to an allowed origin (errors included) carries `Access-Control-Allow-Origin`.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ValidationError } from "../../core/index.ts";
import type { AppEnv } from "./app-env.ts";
import { errorCodes, HttpError } from "./http-errors.ts";

export interface CorsOptions {
  /** Origins allowed to call the API (`https://app.example.com`, no path), or "*" for any. */
  origins: string[] | "*";
  /** How long (seconds) a browser may cache a preflight's answer; default 600. */
  maxAge?: number;
}

export interface CorsSettings {
  origins: ReadonlySet<string> | "*";
  maxAge: number;
}

/** Request headers a browser may send: the bearer token, the JSON type and the idempotency key. */
export const corsAllowHeaders = "Authorization, Content-Type, Idempotency-Key";
/** Response headers a browser's script may read. */
export const corsExposeHeaders = "Location, Allow, WWW-Authenticate";

const originPattern = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/;

/** The checked settings; throws ValidationError (at cold start) for an origin that is not `scheme://host[:port]`. */
export function resolveCors(options: CorsOptions | undefined): CorsSettings | undefined {
  if (options === undefined) return undefined;
  const maxAge = options.maxAge ?? 600;
  if (!Number.isInteger(maxAge) || maxAge < 0 || maxAge > 86_400)
    throw new ValidationError("cors.maxAge", "an integer from 0 to 86400 (seconds)", "createHttpApp");
  if (options.origins === "*") return { origins: "*", maxAge };
  if (!Array.isArray(options.origins) || options.origins.length === 0)
    throw new ValidationError("cors.origins", '"*" or a non-empty list of origins', "createHttpApp");
  const origins = options.origins.map((origin) => {
    const lower = typeof origin === "string" ? origin.toLowerCase() : "";
    if (!originPattern.test(lower))
      throw new ValidationError(
        "cors.origins",
        "origins as scheme://host[:port], without a path",
        "createHttpApp",
      );
    return lower;
  });
  return { origins: new Set(origins), maxAge };
}

export function corsMiddleware(cors: CorsSettings): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header("origin");
    const allowed = origin !== undefined && (cors.origins === "*" || cors.origins.has(origin));
    const preflight =
      c.req.method === "OPTIONS" &&
      origin !== undefined &&
      c.req.header("access-control-request-method") !== undefined;
    if (preflight) {
      // The Origin is not quoted back: no answer echoes a raw header value.
      if (!allowed) throw new HttpError(403, errorCodes.forbidden, "this origin may not call the API");
      c.set("preflight", true);
    }
    await next();
    if (cors.origins !== "*") c.res.headers.append("Vary", "Origin");
    if (!allowed) return;
    c.res.headers.set("Access-Control-Allow-Origin", cors.origins === "*" ? "*" : origin);
    if (!preflight) c.res.headers.set("Access-Control-Expose-Headers", corsExposeHeaders);
  };
}

/** A preflight's answer on a path serving `methods`. */
export function preflightResponse(c: Context<AppEnv>, methods: string, maxAge: number): Response {
  return c.body(null, 204, {
    "Access-Control-Allow-Methods": methods,
    "Access-Control-Allow-Headers": corsAllowHeaders,
    "Access-Control-Max-Age": String(maxAge),
  });
}
