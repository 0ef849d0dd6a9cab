/**
 * Bundles each Lambda function with esbuild: ESM for Node 22, minified, with a linked source map,
 * the AWS SDK left to the runtime. Output: `<outDir>/<name>/index.mjs` and `index.mjs.map`.
 *
 * The output depends only on the sources (no timestamps, no absolute paths), so two builds of one
 * commit give identical bytes, and osls's zips (fixed dates) and Lambda version hashes stay stable.
 */
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";
import { type FunctionEntry, functionEntries, runtimeProvided } from "./functions.ts";

export interface BundleOptions {
  /** The repository root (default: the current directory). */
  root?: string;
  /** Where bundles go (default `<root>/build/lambda`). */
  outDir?: string;
  /** The functions to bundle (default all of them). */
  functions?: readonly FunctionEntry[];
}

export interface BundleReport {
  name: string;
  file: string;
  bytes: number;
  gzipBytes: number;
  mapBytes: number;
  /** Every input module, relative to the root (`node_modules/...` for dependencies). */
  inputs: string[];
  /** Imports left for the runtime to resolve, e.g. `@aws-sdk/client-lambda`. */
  externalImports: string[];
}

export async function bundleFunctions(options: BundleOptions = {}): Promise<BundleReport[]> {
  const root = resolve(options.root ?? ".");
  const outDir = resolve(root, options.outDir ?? "build/lambda");
  const entries = options.functions ?? functionEntries;
  return await Promise.all(entries.map((fn) => bundleOne(root, outDir, fn)));
}

async function bundleOne(root: string, outDir: string, fn: FunctionEntry): Promise<BundleReport> {
  const file = join(outDir, fn.name, "index.mjs");
  const result = await build({
    absWorkingDir: root,
    entryPoints: [fn.entry],
    outfile: file,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minify: true,
    // Map stack traces back to the sources with NODE_OPTIONS=--enable-source-maps; the sources
    // themselves stay out of the map, which keeps it a fraction of the size.
    sourcemap: "linked",
    sourcesContent: false,
    external: runtimeProvided,
    // Hono and @upstash/redis pick their Node builds.
    conditions: ["node"],
    mainFields: ["module", "main"],
    metafile: true,
    logLevel: "warning",
  });
  const code = readFileSync(file);
  return {
    name: fn.name,
    file,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code, { level: 9 }).byteLength,
    mapBytes: readFileSync(`${file}.map`).byteLength,
    inputs: Object.keys(result.metafile.inputs).map((input) => relative(root, resolve(root, input))),
    externalImports: externalImports(result.metafile),
  };
}

function externalImports(metafile: Metafile): string[] {
  const found = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) if (imported.external) found.add(imported.path);
  }
  return [...found].sort();
}
