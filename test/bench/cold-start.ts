/**
 * Section 6: cold start. Every function is bundled as `npm run build` bundles it (into a temporary
 * directory outside the repository, so no node_modules can be reached), next to a BullMQ 6.7.0 bundle
 * built the same way from a handler importing `Queue` and `Worker`, and an empty handler as the
 * baseline; each is imported in a fresh `node` process, in rounds (every bundle once per round).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { bundleFunctions } from "../../infra/build/bundle.ts";
import { importInFreshNode } from "../packaging/fresh-node.ts";
import { type BenchEnv, median, round } from "./common.ts";

export interface BundleRow {
  name: string;
  system: "nimbusq" | "bullmq" | "baseline";
  bytes: number;
  gzipBytes: number;
  importMs: { median: number; min: number; max: number };
}

export interface ColdStartResult {
  runs: number;
  bundles: BundleRow[];
}

const repoRoot = resolve(import.meta.dirname, "../..");

/** What the deployed functions read at import (serverless.yml sets these). */
const functionEnv: Record<string, string> = {
  UPSTASH_REDIS_REST_URL: "http://127.0.0.1:9",
  UPSTASH_REDIS_REST_TOKEN: "dummy",
  AWS_REGION: "us-east-1",
  NIMBUSQ_API_TOKENS: "bench-token",
  NIMBUSQ_QUEUES: "email,report",
  NIMBUSQ_WORKERS: "email:email-worker:10:2,report:report-worker:2:1",
  NIMBUSQ_EVENT_BUS: "bench-bus",
  NIMBUSQ_SWEEPER_MODE: "loop",
};

async function bullmqBundle(dir: string): Promise<string> {
  const file = join(dir, "bullmq", "index.mjs");
  await build({
    stdin: {
      contents:
        'import { Queue, Worker } from "bullmq";\nexport const handler = async () => ({ queue: typeof Queue, worker: typeof Worker });\n',
      resolveDir: repoRoot,
      loader: "js",
    },
    outfile: file,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minify: true,
    // BullMQ and ioredis are CommonJS: an ESM bundle needs `require` for Node's built-ins.
    banner: {
      js: 'import { createRequire as __nqRequire } from "node:module"; const require = __nqRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
  return file;
}

async function sizeOf(file: string): Promise<{ bytes: number; gzipBytes: number }> {
  const code = await readFile(file);
  return { bytes: code.byteLength, gzipBytes: gzipSync(code, { level: 9 }).byteLength };
}

export async function runColdStart(env: BenchEnv): Promise<ColdStartResult> {
  const runs = env.quick ? 2 : 10;
  const dir = await mkdtemp(join(tmpdir(), "nimbusq-bench-bundles-"));
  try {
    const reports = await bundleFunctions({ root: repoRoot, outDir: join(dir, "dist/functions") });
    const baseline = join(dir, "baseline", "index.mjs");
    await mkdir(join(dir, "baseline"));
    await writeFile(baseline, "export const handler = async () => ({});\n");
    const targets: { name: string; system: BundleRow["system"]; file: string }[] = [
      { name: "empty handler", system: "baseline", file: baseline },
      ...reports.map((r) => ({ name: r.name, system: "nimbusq" as const, file: r.file })),
      { name: "bullmq Queue + Worker", system: "bullmq", file: await bullmqBundle(dir) },
    ];
    const times = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    for (let run = 0; run < runs; run++) {
      for (const target of targets) {
        const loaded = await importInFreshNode(target.file, { cwd: dir, env: functionEnv });
        if (loaded.handlerType !== "function") throw new Error(`${target.name}: no handler function`);
        times.get(target.name)?.push(loaded.importMs);
      }
    }
    const bundles: BundleRow[] = [];
    for (const target of targets) {
      const samples = times.get(target.name) as number[];
      bundles.push({
        name: target.name,
        system: target.system,
        ...(await sizeOf(target.file)),
        importMs: {
          median: round(median(samples), 1),
          min: round(Math.min(...samples), 1),
          max: round(Math.max(...samples), 1),
        },
      });
      env.log(`cold start: ${target.name}: median ${round(median(samples), 1)} ms`);
    }
    return { runs, bundles };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
