/** Authentication for every route but the public OpenAPI document, and the admin gate. */
import type { MiddlewareHandler } from "hono";
import { bearerToken, tokenChecker } from "./auth.ts";
import { errorCodes, HttpError } from "./http-errors.ts";
import type { HttpSettings } from "./options.ts";
import type { AppEnv } from "./queue-access.ts";

const publicPaths: ReadonlySet<string> = new Set(["/openapi.json"]);

/** 401 without a valid bearer token; otherwise records whether the token is an admin token. */
export function authenticate(settings: HttpSettings): MiddlewareHandler<AppEnv> {
  const check = tokenChecker(settings.tokens);
  return async (c, next) => {
    if (publicPaths.has(c.req.path)) return next();
    const presented = bearerToken(c.req.header("authorization"));
    if (presented === undefined) {
      throw new HttpError(
        401,
        errorCodes.unauthorized,
        "an Authorization: Bearer <token> header is required",
        undefined,
        {
          "WWW-Authenticate": 'Bearer realm="nimbusq"',
        },
      );
    }
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
