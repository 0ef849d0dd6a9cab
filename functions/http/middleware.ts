/** Authentication for every route but the public OpenAPI document, and the admin gate. */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.ts";
import { bearerToken, tokenChecker } from "./auth.ts";
import { errorCodes, HttpError } from "./http-errors.ts";
import type { HttpSettings } from "./options.ts";

const publicPaths: ReadonlySet<string> = new Set(["/openapi.json"]);

/**
 * The 401 for a missing or malformed Authorization header. Its message is fixed: the header is never
 * quoted back, since whatever it holds may be a credential.
 */
export function unauthorized(): HttpError {
  return new HttpError(
    401,
    errorCodes.unauthorized,
    "an Authorization: Bearer <token> header is required",
    undefined,
    { "WWW-Authenticate": 'Bearer realm="nimbusq"' },
  );
}

/** 401 without a valid bearer token; otherwise records whether the token is an admin token. */
export function authenticate(settings: HttpSettings): MiddlewareHandler<AppEnv> {
  const check = tokenChecker(settings.tokens);
  return async (c, next) => {
    if (publicPaths.has(c.req.path) || c.get("preflight")) return next();
    const presented = bearerToken(c.req.header("authorization"));
    if (presented === undefined) throw unauthorized();
    const grant = await check(presented);
    if (!grant) {
      throw new HttpError(401, errorCodes.unauthorized, "the bearer token is not valid", undefined, {
        "WWW-Authenticate": 'Bearer realm="nimbusq", error="invalid_token"',
      });
    }
    c.set("admin", grant.admin);
    return next();
  };
}

/** 403 unless the request's token is an admin token. */
export const adminOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get("admin")) throw new HttpError(403, errorCodes.forbidden, "this operation needs an admin token");
  return next();
};
