/**
 * The HTTP function's `/openapi.json`, written at build time: this plugin loads
 * functions/http/served-document.ts as a module that hands prebuilt-document.ts the document
 * openApiDocument() writes now, from the same schemas the function validates with, packed (JSON,
 * brotli, base64: ~10 KB for ~75 KB). What writes the document (openapi.ts, openapi-build.ts, zod's
 * toJSONSchema) then stays out of the bundle; the function still checks requests with the schemas.
 */
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Plugin } from "esbuild";
import { packJson } from "./pack-json.ts";

const servedDocument = /[\\/]functions[\\/]http[\\/]served-document\.ts$/;

/** The document of the sources beside `servedPath`, packed as prebuilt-document.ts unpacks it. */
async function packedDocument(servedPath: string): Promise<string> {
  const url = pathToFileURL(join(dirname(servedPath), "openapi.ts")).href;
  const { openApiDocument } = (await import(url)) as { openApiDocument: () => unknown };
  return packJson(openApiDocument());
}

export const prebuiltOpenApi: Plugin = {
  name: "prebuilt-openapi",
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: servedDocument }, async (args) => ({
      contents: [
        'import { documentFrom } from "./prebuilt-document.ts";',
        `export const servedDocument = documentFrom(${JSON.stringify(await packedDocument(args.path))});`,
        "",
      ].join("\n"),
      loader: "ts",
      resolveDir: dirname(args.path),
    }));
  },
};
