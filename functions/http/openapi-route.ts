/**
 * The operation that serves the document (`GET /openapi.json`, public), declared like every other
 * (api-route.ts), apart from openapi.ts so that serving it does not bring in the code that writes it.
 */
import * as z from "zod/mini";
import type { ApiRoute } from "./api-route.ts";
import { errorResponses } from "./error-schemas.ts";
import { errorCodes } from "./http-errors.ts";
import { jsonAnswer } from "./route-parts.ts";
import { named } from "./schema-docs.ts";

const documentSchema = named(
  "OpenApiDocument",
  z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }) }),
  { example: { openapi: "3.1.0", info: { title: "nimbusq HTTP API", version: "1" } } },
);

export const openApiRoute: ApiRoute = {
  method: "get",
  path: "/openapi.json",
  operationId: "getOpenApiDocument",
  tags: ["meta"],
  summary: "This document (no token needed)",
  security: [],
  responses: {
    200: jsonAnswer("The OpenAPI 3.1 document", documentSchema),
    ...errorResponses({ common: false, extra: { 405: [errorCodes.methodNotAllowed] } }),
  },
};
