/**
 * `npm run bench -- --quick` for the cheap sections, into a temporary directory: the runner works end
 * to end and writes the JSON, the Markdown and the SVG. Counts are checked; timings never are.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BenchResults } from "./results-types.ts";
import { parseArgs, runBench } from "./run.ts";

const out = mkdtempSync(join(tmpdir(), "nimbusq-bench-smoke-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("npm run bench -- --quick", () => {
  it("parses its flags", () => {
    expect(parseArgs(["--quick", "--only", "cost,idle", "--idle-window", "3"])).toMatchObject({
      quick: true,
      only: ["cost", "idle"],
      idleWindowSeconds: 3,
    });
    expect(() => parseArgs(["--only", "speed"])).toThrow(/unknown section "speed"/);
  });

  it("measures cost, scale and idle and writes latest.json, BENCHMARKS.md and the SVG", async () => {
    const options = {
      ...parseArgs(["--quick", "--only", "cost,scale,idle", "--idle-window", "3", "--out", out]),
    };
    await runBench({ ...options, log: () => undefined });

    const json = join(out, "latest.json");
    expect(existsSync(json)).toBe(true);
    const results = JSON.parse(readFileSync(json, "utf8")) as BenchResults;
    expect(results.quick).toBe(true);
    expect(results.machine.packages.bullmq).toBe("6.7.0");
    for (const name of ["cost", "scale", "idle"] as const)
      expect(results.sections[name]?.error).toBeUndefined();
    expect(results.sections.throughput).toBeUndefined();

    const cost = results.sections.cost?.result;
    const row = (pattern: string, batch: number) =>
      cost?.lifecycle.find((r) => r.pattern === pattern && r.batch === batch);
    // Three requests per batch: add, lease, ack.
    expect(row("arrivals", 1)?.nimbusq.requestsPerJob).toBe(3);
    expect(row("arrivals", 10)?.nimbusq.requestsPerJob).toBe(0.3);
    // The REST server's meter and redis-server's own counters agree.
    for (const r of [...(cost?.lifecycle ?? []), ...(cost?.failing ?? [])]) {
      expect(r.nimbusq.crossCheckPerJob).toBe(r.nimbusq.billedPerJob);
      expect(r.bullmq.billedPerJob).toBeGreaterThan(0);
    }
    expect(row("backlog", 10)?.nimbusq.billedPerJob).toBeLessThan(
      row("backlog", 10)?.bullmq.billedPerJob ?? 0,
    );
    // The worker-engine issue's cases, each next to BullMQ, and the Upstash ceiling they imply.
    expect(cost?.issueCases?.map((r) => r.case)).toEqual([
      "backlog-c1",
      "trickle",
      "backlog-c50",
      "backlog-c50-final",
    ]);
    for (const r of cost?.issueCases ?? []) {
      expect(r.nimbusq.crossCheckPerJob).toBe(r.nimbusq.billedPerJob);
      expect(r.bullmq.billedPerJob).toBeGreaterThan(0);
    }
    expect(cost?.ceiling?.nimbusq).toBeGreaterThan(0);
    expect(cost?.ceiling?.bullmq).toBeGreaterThan(0);

    const scale = results.sections.scale?.result;
    for (const sweep of scale?.sweeps ?? []) expect(sweep.promoted).toBe(sweep.due);

    const idle = results.sections.idle?.result;
    expect(idle?.sweeper.find((s) => s.mode === "loop" && s.queues === 1)?.perTick).toBeGreaterThan(0);
    expect(idle?.bullmq.map((b) => b.workers)).toEqual([1, 10]);

    const markdown = readFileSync(join(out, "BENCHMARKS.md"), "utf8");
    expect(markdown).toContain("# Benchmarks");
    expect(markdown).toContain("## 1. Billed Redis commands per job");
    expect(markdown).toContain("### The worker-engine cases");
    expect(markdown).toContain("![nimbusq next to BullMQ 6.7.0](benchmarks.svg)");
    expect(markdown).toContain("_Not measured: run `npm run bench -- --only throughput`._");

    const svg = readFileSync(join(out, "benchmarks.svg"), "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("Billed Redis commands per job");
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
  }, 90_000);

  it("measures throughput in worker processes of their own, on loopback and behind 2 ms", async () => {
    // Same directory and mode: the sections measured above are kept.
    const options = parseArgs(["--quick", "--only", "throughput", "--out", out]);
    await runBench({ ...options, log: () => undefined });
    const results = JSON.parse(readFileSync(join(out, "latest.json"), "utf8")) as BenchResults;
    expect(results.sections.throughput?.error).toBeUndefined();
    expect(results.sections.cost?.result).toBeDefined();
    const cases = results.sections.throughput?.result?.cases ?? [];
    expect(cases.map((c) => `${c.profile} ${c.processor} ${c.inFlight}`)).toEqual(
      ["loopback", "delayed"].flatMap((profile) =>
        [50, 200].flatMap((n) => ["no-op", "io-10ms", "variable"].map((p) => `${profile} ${p} ${n}`)),
      ),
    );
    for (const c of cases) {
      for (const round of c.rounds) {
        // Every job done on both sides; rates are not checked.
        expect(round.nimbusq.done).toBe(c.jobs);
        expect(round.bullmq.done).toBe(c.jobs);
      }
      if (c.processor === "no-op") expect(c.physicalLimit).toBeUndefined();
      else expect(c.physicalLimit).toBeGreaterThan(0);
    }
    const markdown = readFileSync(join(out, "BENCHMARKS.md"), "utf8");
    expect(markdown).toContain("+2 ms per round trip");
    expect(markdown).not.toContain("_Not measured: run `npm run bench -- --only throughput`._");
    const svg = readFileSync(join(out, "benchmarks.svg"), "utf8");
    expect(svg).toContain("Throughput, jobs/s, loopback");
  }, 90_000);
});
