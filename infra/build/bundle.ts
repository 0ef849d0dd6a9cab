/**
 * Bundles each Lambda function with esbuild: ESM for Node 22, minified, with a linked source map,
 * the AWS SDK left to the runtime. Output: `<outDir>/<name>/index.mjs` and `index.mjs.map`, and beside
 * them `node_modules/ioredis/` (one CommonJS file): Redis over TCP loads it at its first command only
 * (core/redis/tcp-redis.ts, through a specifier esbuild does not follow), so it costs a REST deployment
 * nothing but zip bytes, and a TCP deployment finds it where Node looks.
 *
 * The HTTP function's `/openapi.json` is written here, from the schemas it validates with
 * (prebuilt-openapi.ts), so the bundle carries the document but not the code that writes it, nor
 * the text only the document reads (doc-text.ts). Each function carries the layouts and sources of
 * the Lua scripts it calls, packed, and unpacks them when first needed (packed-scripts.ts).
 *
 * The output depends only on the sources (no timestamps, no absolute paths), so two builds of one
 * commit give identical bytes, and osls's zips (fixed dates) and Lambda version hashes stay stable.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { type BuildOptions, build, type Metafile, type Plugin } from "esbuild";
import { docTextOut } from "./doc-text.ts";
import { type FunctionEntry, functionEntries, runtimeProvided } from "./functions.ts";
import { packedScripts, scriptsIn } from "./packed-scripts.ts";
import { prebuiltOpenApi } from "./prebuilt-openapi.ts";

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
  /** The scripts the function calls: the bundle carries their sources, packed (packed-scripts.ts). */
  scripts: string[];
}

export async function bundleFunctions(options: BundleOptions = {}): Promise<BundleReport[]> {
  const root = resolve(options.root ?? ".");
  const outDir = resolve(root, options.outDir ?? "build/lambda");
  const entries = options.functions ?? functionEntries;
  const reports = await Promise.all(entries.map((fn) => bundleOne(root, outDir, fn)));
  const ioredis = await bundleIoredis(root);
  for (const fn of entries) {
    const dir = join(outDir, fn.name, "node_modules", "ioredis");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "index.cjs"), ioredis);
    writeFileSync(join(dir, "package.json"), '{"name":"ioredis","main":"index.cjs"}\n');
  }
  return reports;
}

/** ioredis and its dependencies as one minified CommonJS file. */
async function bundleIoredis(root: string): Promise<Uint8Array> {
  const result = await build({
    absWorkingDir: root,
    stdin: { contents: 'module.exports = require("ioredis");', resolveDir: root, loader: "js" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node22",
    minify: true,
    write: false,
    logLevel: "warning",
  });
  return result.outputFiles[0]?.contents ?? new Uint8Array();
}

async function bundleOne(root: string, outDir: string, fn: FunctionEntry): Promise<BundleReport> {
  const file = join(outDir, fn.name, "index.mjs");
  // A first build learns which scripts the function calls; the bundle carries only their sources, packed.
  const probe = await build({ ...commonOptions(root, fn), write: false, sourcemap: false, metafile: false });
  const called = scriptsIn(probe.outputFiles[0]?.text ?? "");
  const result = await build({
    ...commonOptions(root, fn),
    outfile: file,
    // Map stack traces back to the sources with NODE_OPTIONS=--enable-source-maps; the sources
    // themselves stay out of the map, which keeps it a fraction of the size.
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
    plugins: [...commonPlugins, packedScripts(called)],
  });
  const code = readFileSync(file);
  const packedCalled = scriptsIn(code.toString("utf8"));
  if (packedCalled.join() !== called.join())
    throw new Error(`${fn.name}: the packed build calls ${packedCalled.join()}, its probe ${called.join()}`);
  return {
    name: fn.name,
    file,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code, { level: 9 }).byteLength,
    mapBytes: readFileSync(`${file}.map`).byteLength,
    scripts: called,
    inputs: Object.keys(result.metafile.inputs).map((input) => relative(root, resolve(root, input))),
    externalImports: externalImports(result.metafile),
  };
}

function commonOptions(root: string, fn: FunctionEntry) {
  return {
    absWorkingDir: root,
    entryPoints: [fn.entry],
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minify: true,
    external: runtimeProvided,
    // Hono and @upstash/redis pick their Node builds.
    conditions: ["node"],
    mainFields: ["module", "main"],
    logLevel: "warning",
    plugins: commonPlugins,
  } satisfies BuildOptions;
}

/**
 * zod re-exports every one of its ~40 message locales as a namespace (`z.locales`), which esbuild
 * cannot shake; the HTTP API only ever uses English (its error bodies are our own text anyway). This
 * resolves zod's locale index to English alone: 260 KB less in the http bundle.
 */
const zodEnglishOnly: Plugin = {
  name: "zod-english-only",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: join(args.resolveDir, "locales-en-only.js"), namespace: "zod-locales" }
        : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: join(args.path, "..", "..", "locales"),
    }));
  },
};

function externalImports(metafile: Metafile): string[] {
  const found = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) if (imported.external) found.add(imported.path);
  }
  return [...found].sort();
}

const commonPlugins = [zodEnglishOnly, prebuiltOpenApi, docTextOut];
