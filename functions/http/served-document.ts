/**
 * The document `GET /openapi.json` answers with, written from the routes' schemas (openapi.ts) when
 * first asked for. The Lambda bundle swaps this module for prebuilt-document.ts, which carries the
 * same document written from the same schemas when the bundle was built (infra/build/bundle.ts), so
 * the function carries neither the code that writes it nor zod's JSON Schema converter.
 */
import { type OpenApiDocument, openApiDocument } from "./openapi.ts";
import type { ApiServer } from "./options.ts";

/** The document for these servers (undefined: openApiDocument's default, the local stack). */
export async function servedDocument(servers: readonly ApiServer[] | undefined): Promise<OpenApiDocument> {
  return openApiDocument(servers);
}
