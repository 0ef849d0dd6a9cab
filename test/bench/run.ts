/**
 * `npm run bench`: every benchmark, nimbusq next to BullMQ 6.7.0 on one redis-server started for the
 * run; writes test/bench/results/latest.json, BENCHMARKS.md and docs/benchmarks.svg.
 *
 *   npm run bench                           # everything (about 6 minutes on 2 cores)
 *   npm run bench -- --only throughput,idle # some sections; earlier results of the others are kept
 *   npm run bench -- --quick                # tiny sizes, into test/bench/results/quick/
 *   npm run bench -- --out DIR              # write latest.json, BENCHMARKS.md and benchmarks.svg to DIR
 *   npm run bench -- --idle-window 60       # BullMQ's idle window in seconds (default 300, quick 5)
 *   npm run bench -- --render               # only rewrite BENCHMARKS.md and the SVG from latest.json
 *   BENCH_CPU_PROF=DIR npm run bench -- --only throughput   # CPU profiles of both worker processes in DIR
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, release, totalmem, type } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { runColdStart } from "./cold-start.ts";
import { type BenchEnv, round, startBenchEnv, stopBenchEnv } from "./common.ts";
import { runCost } from "./cost.ts";
import { type BullmqIdleMeasurement, runQueueEventsIdle, runSweeperIdle, startBullmqIdle } from "./idle.ts";
import { runLatency } from "./latency.ts";
import { type ReportPaths, writeReport } from "./report.ts";
import type { BenchResults, MachineInfo, SectionName, SectionOutcome } from "./results-types.ts";
import { sectionNames } from "./results-types.ts";
import { runScale } from "./scale.ts";
import { runThroughput } from "./throughput.ts";

const repoRoot = resolve(import.meta.dirname, "../..");

export interface BenchOptions {
  quick: boolean;
  only: SectionName[];
  /** One directory for all three outputs; default: the repository's places (quick: results/quick/). */
  outDir?: string;
  idleWindowSeconds?: number;
  /** Measure nothing: rewrite the Markdown and the SVG from the JSON already there. */
  renderOnly?: boolean;
  log?: (line: string) => void;
}

export type OutputPaths = ReportPaths;

export function parseArgs(argv: string[]): BenchOptions {
  const options: BenchOptions = { quick: false, only: [...sectionNames] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === "--quick") options.quick = true;
    else if (arg === "--render") options.renderOnly = true;
    else if (arg === "--only") {
      const names = value()
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      for (const name of names) {
        if (!(sectionNames as readonly string[]).includes(name))
          throw new Error(`unknown section "${name}": use ${sectionNames.join(", ")}`);
      }
      options.only = names as SectionName[];
    } else if (arg === "--out") options.outDir = resolve(value());
    else if (arg === "--idle-window") {
      const seconds = Number(value());
      if (!Number.isFinite(seconds) || seconds <= 0) throw new Error("--idle-window takes seconds > 0");
      options.idleWindowSeconds = seconds;
    } else throw new Error(`unknown argument "${arg}"`);
  }
  return options;
}

export function outputPaths(options: BenchOptions): OutputPaths {
  const dir = options.outDir ?? (options.quick ? join(repoRoot, "test/bench/results/quick") : undefined);
  if (dir) {
    return {
      json: join(dir, "latest.json"),
      markdown: join(dir, "BENCHMARKS.md"),
      svg: join(dir, "benchmarks.svg"),
    };
  }
  return {
    json: join(repoRoot, "test/bench/results/latest.json"),
    markdown: join(repoRoot, "BENCHMARKS.md"),
    svg: join(repoRoot, "docs/benchmarks.svg"),
  };
}

function packageVersion(name: string): string {
  try {
    const file = join(repoRoot, "node_modules", name, "package.json");
    return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

function gitCommit(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot }).toString().trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: repoRoot }).toString().trim() !== "";
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return "unknown";
  }
}

async function machineInfo(env: BenchEnv): Promise<MachineInfo> {
  const server = await env.direct.info("server");
  const own = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
  return {
    cpuModel: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    os: `${type()} ${release()}`,
    node: process.version,
    redis: /redis_version:(\S+)/.exec(server)?.[1] ?? "unknown",
    packages: {
      nimbusq: own.version,
      bullmq: packageVersion("bullmq"),
      ioredis: packageVersion("ioredis"),
      "@upstash/redis": packageVersion("@upstash/redis"),
      hono: packageVersion("hono"),
      esbuild: packageVersion("esbuild"),
    },
    commit: gitCommit(),
  };
}

/** Earlier results kept when only some sections run (same mode, same place). */
function previousSections(paths: OutputPaths, quick: boolean): BenchResults["sections"] {
  if (!existsSync(paths.json)) return {};
  try {
    const previous = JSON.parse(readFileSync(paths.json, "utf8")) as BenchResults;
    return previous.quick === quick ? previous.sections : {};
  } catch {
    return {};
  }
}

async function timed<T>(quick: boolean, run: () => Promise<T>): Promise<SectionOutcome<T>> {
  const started = Date.now();
  const measuredAt = new Date().toISOString();
  try {
    const result = await run();
    return { measuredAt, quick, durationSeconds: round((Date.now() - started) / 1000, 1), result };
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return {
      measuredAt,
      quick,
      durationSeconds: round((Date.now() - started) / 1000, 1),
      error: message.split("\n").slice(0, 4).join(" | "),
    };
  }
}

export async function runBench(
  options: BenchOptions,
): Promise<{ results: BenchResults; paths: OutputPaths }> {
  const started = Date.now();
  const log =
    options.log ??
    ((line: string) =>
      process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`));
  const selected = new Set(options.only);
  const paths = outputPaths(options);
  const sections: BenchResults["sections"] =
    selected.size < sectionNames.length ? previousSections(paths, options.quick) : {};

  if (options.renderOnly) {
    const results = JSON.parse(readFileSync(paths.json, "utf8")) as BenchResults;
    await writeReport(results, paths);
    log(`rewrote ${paths.markdown} and ${paths.svg} from ${paths.json}`);
    return { results, paths };
  }

  let idle: BullmqIdleMeasurement | undefined;
  const idleStartedAt = Date.now();
  const windowSeconds = options.idleWindowSeconds ?? (options.quick ? 5 : 300);
  if (selected.has("idle")) {
    log(`idle: BullMQ Workers idling in the background for ${windowSeconds} s`);
    idle = await startBullmqIdle(windowSeconds * 1000);
  }
  let env: BenchEnv | undefined;
  let machine: MachineInfo;
  try {
    env = await startBenchEnv(options.quick, log);
    machine = await machineInfo(env);
    const bench = env;
    const order: [SectionName, () => Promise<unknown>][] = [
      ["cost", () => runCost(bench)],
      ["throughput", () => runThroughput(bench)],
      ["throughputTcp", () => runThroughput(bench, "tcp")],
      ["latency", () => runLatency(bench)],
      ["coldstart", () => runColdStart(bench)],
      ["scale", () => runScale(bench)],
    ];
    for (const [name, run] of order) {
      if (!selected.has(name)) continue;
      log(`${name}: start`);
      const outcome = await timed(options.quick, run);
      (sections as Record<string, SectionOutcome<unknown>>)[name] = outcome;
      log(`${name}: ${outcome.error ? `FAILED: ${outcome.error}` : "done"} in ${outcome.durationSeconds} s`);
    }
    if (idle) {
      const measurement = idle;
      idle = undefined;
      const outcome = await timed(options.quick, async () => {
        const sweeper = await runSweeperIdle(bench);
        const queueEvents = await runQueueEventsIdle(bench, options.quick ? 10_000 : 60_000);
        log(`idle: an idle QueueEvents costs ${queueEvents.perHour} billed commands an hour`);
        log("idle: waiting for the end of BullMQ's idle window");
        const bullmq = await measurement.finish();
        return { bullmq, sweeper, queueEvents, nimbusqWorkersPerHour: 0 as const, windowSeconds };
      });
      // The BullMQ window ran alongside the other sections: the section took the whole time.
      outcome.durationSeconds = round((Date.now() - idleStartedAt) / 1000, 1);
      sections.idle = outcome;
      log(`idle: ${outcome.error ? `FAILED: ${outcome.error}` : "done"}`);
    }
  } finally {
    await idle?.abort();
    if (env) await stopBenchEnv(env);
  }
  const results: BenchResults = {
    generatedAt: new Date().toISOString(),
    quick: options.quick,
    totalSeconds: round((Date.now() - started) / 1000, 1),
    machine,
    sections,
  };
  await writeReport(results, paths);
  log(`wrote ${paths.json}, ${paths.markdown}, ${paths.svg} in ${results.totalSeconds} s`);
  return { results, paths };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const options = parseArgs(process.argv.slice(2));
  // Every loop is bounded; this is the last resort if something still hangs.
  const limitMs = options.quick ? 240_000 : 660_000 + (options.idleWindowSeconds ?? 0) * 1000;
  setTimeout(() => {
    process.stderr.write(`bench: still running after ${limitMs / 1000} s, giving up\n`);
    process.exit(2);
  }, limitMs).unref();
  try {
    const { results } = await runBench(options);
    const failed = Object.entries(results.sections).filter(([, s]) => s?.error);
    process.exit(failed.length > 0 ? 1 : 0);
  } catch (error) {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  }
}
