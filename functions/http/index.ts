/** nimbusq's HTTP API: the Hono app, its Lambda handler, and its configuration from the environment. */

export { httpOptionsFromEnv } from "../config/http-env.ts";
export { createHttpApp } from "./app.ts";
export type { CorsOptions } from "./cors.ts";
export type { ErrorBody, ErrorCode } from "./http-errors.ts";
export type { JobView } from "./job-view.ts";
export { type HttpLambdaHandler, httpHandler } from "./lambda.ts";
export { openApiDocument } from "./openapi.ts";
export type { ApiToken, HttpOptions, KickHint } from "./options.ts";
