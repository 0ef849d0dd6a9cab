/**
 * The Lambda bundle's served-document.ts (infra/build/bundle.ts swaps it in): `documentFrom` takes
 * the document openApiDocument() wrote at build time, with its default servers (JSON,
 * brotli-compressed, base64), and answers it with the app's servers, if it has any, in their place.
 * It is unpacked on the first request for it (node:zlib is loaded then, not at import), and kept.
 */
import type { OpenApiDocument } from "./openapi.ts";
import type { ApiServer } from "./options.ts";

export function documentFrom(packed: string) {
  let document: OpenApiDocument | undefined;
  return async function servedDocument(servers: readonly ApiServer[] | undefined): Promise<OpenApiDocument> {
    if (document === undefined) {
      const { brotliDecompressSync } = await import("node:zlib");
      document = JSON.parse(brotliDecompressSync(Buffer.from(packed, "base64")).toString("utf8"));
    }
    const built = document as OpenApiDocument;
    // `servers` keeps its place among the keys: the text reads as openApiDocument(servers) writes it.
    return servers === undefined ? built : { ...built, servers: servers.map((server) => ({ ...server })) };
  };
}
