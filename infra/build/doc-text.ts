/**
 * The HTTP API's schemas and routes carry text only its `/openapi.json` reads: each `summary`,
 * `description` and `example` (of a route, an answer, a header, a body or a schema's documentation).
 * The Lambda bundle serves a document written when it was built (prebuilt-openapi.ts), so this plugin
 * empties that text in the function's modules (about 12 KB) — the document was already written from
 * the sources, with it. Nothing else reads those properties (openapi*.ts, which write the document, are
 * not in the bundle); the packaging test holds the served document to the sources' byte for byte.
 */
import { readFile } from "node:fs/promises";
import type { Plugin } from "esbuild";
import ts from "typescript";

const httpModules = /[\\/]functions[\\/]http[\\/][\w-]+\.ts$/;
const documentWriters = /[\\/]openapi[\w-]*\.ts$/;
const docProperties = new Set(["summary", "description", "example"]);

/** `source` with every `summary:`, `description:` and `example:` property of an object literal set to "". */
export function withoutDocText(source: string, fileName: string): { text: string; emptied: number } {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edits: { start: number; end: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAssignment(node) &&
      (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) &&
      docProperties.has(node.name.text) &&
      ts.isObjectLiteralExpression(node.parent)
    ) {
      edits.push({ start: node.initializer.getStart(file), end: node.initializer.getEnd() });
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  let text = source;
  for (const { start, end } of edits.reverse()) text = `${text.slice(0, start)}""${text.slice(end)}`;
  return { text, emptied: edits.length };
}

export const docTextOut: Plugin = {
  name: "doc-text-out",
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: httpModules }, async (args) =>
      documentWriters.test(args.path)
        ? undefined
        : { contents: withoutDocText(await readFile(args.path, "utf8"), args.path).text, loader: "ts" },
    );
  },
};
