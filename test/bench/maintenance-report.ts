/**
 * The tables test/bench/maintenance-scale.ts prints: per operation the spread of its script calls next
 * to the control's, then every call over the bound with where its time went, then the events Redis's
 * own latency monitor saw.
 */
import { readFileSync } from "node:fs";
import type { Redis as IORedis } from "ioredis";
import { quantile, type ThreadCounters } from "./common.ts";

/** The bound every script call must keep (ms). */
export const boundMs = 20;

/** One script call: its time in Redis (SLOWLOG), its time seen by the client, the server thread's counters. */
export interface CallSample {
  scriptUs: number;
  callMs: number;
  /** The redis-server main thread over the call; null without /proc. */
  counters: ThreadCounters | null;
}

export interface Row {
  operation: string;
  jobs: number;
  steps: CallSample[];
  /** One control call after each step, as much CPU work as the step (empty for BullMQ's rows). */
  control: CallSample[];
  /** The operation's time, controls excluded (ms). */
  totalMs: number;
  /** What Redis's latency monitor saw during the operation. */
  latency: LatencyEvent[];
  /** The machine's 1-minute load average when the operation ended (2 cores). */
  load: number;
}

/** A LATENCY LATEST entry: event, unix time of the latest, its ms, the most ms since the reset. */
export type LatencyEvent = [string, number, number, number];

function spread(samples: readonly CallSample[]): string[] {
  if (samples.length === 0) return ["–", "–", "–", "–", "–"];
  const ms = samples.map((sample) => sample.scriptUs / 1000);
  return [
    quantile(ms, 0.5).toFixed(1),
    quantile(ms, 0.99).toFixed(1),
    quantile(ms, 0.999).toFixed(1),
    Math.max(...ms).toFixed(1),
    String(ms.filter((value) => value > boundMs).length),
  ];
}

/** The call's script time the redis-server thread was not on a CPU, at least (ms). */
function offCpuMs(sample: CallSample): number {
  if (!sample.counters) return Number.NaN;
  return Math.max(0, sample.scriptUs / 1000 - sample.counters.cpuNs / 1e6);
}

/** The redis-server thread's time on a CPU over the calls (ms): median and most. */
function cpuSpread(samples: readonly CallSample[]): string[] {
  const cpu = samples.flatMap((sample) => (sample.counters ? [sample.counters.cpuNs / 1e6] : []));
  if (cpu.length === 0) return ["–", "–"];
  return [quantile(cpu, 0.5).toFixed(1), Math.max(...cpu).toFixed(1)];
}

function printSpreads(rows: readonly Row[]): void {
  const jobs = rows[0]?.jobs ?? 0;
  const ours = rows.filter((row) => row.control.length > 0);
  const all: Row = {
    operation: "**all nimbusq calls above**",
    jobs,
    steps: ours.flatMap((row) => row.steps),
    control: ours.flatMap((row) => row.control),
    totalMs: ours.reduce((sum, row) => sum + row.totalMs, 0),
    latency: [],
    load: Number.NaN,
  };
  const scriptColumns = `median (ms) | p99 | p99.9 | max | > ${boundMs} ms | on CPU: median (ms) | max`;
  console.log(
    `| operation (${jobs} jobs) | script calls | ${scriptColumns} | longest call via REST (ms) | total (ms) |`,
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const row of [...rows, all]) {
    const longest = Math.max(...row.steps.map((sample) => sample.callMs));
    const call = Number.isNaN(longest) ? "–" : longest.toFixed(1);
    const cells = [String(row.steps.length), ...spread(row.steps), ...cpuSpread(row.steps), call];
    console.log(`| ${row.operation} | ${cells.join(" | ")} | ${row.totalMs.toFixed(0)} |`);
  }
  console.log(`\nThe control calls, one after each step above, as much CPU work as that step:\n`);
  console.log(`| after the steps of | control calls | ${scriptColumns} |`);
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const row of [...ours, all]) {
    const cells = [String(row.control.length), ...spread(row.control), ...cpuSpread(row.control)];
    console.log(`| ${row.operation} | ${cells.join(" | ")} |`);
  }
}

function printSlowCalls(rows: readonly Row[]): void {
  const slow = rows.flatMap((row) => [
    ...row.steps.map((sample) => ({ operation: row.operation, kind: "step", sample })),
    ...row.control.map((sample) => ({ operation: row.operation, kind: "control", sample })),
  ]);
  const over = slow
    .filter(({ sample }) => sample.counters && sample.scriptUs / 1000 > boundMs)
    .sort((a, b) => b.sample.scriptUs - a.sample.scriptUs);
  console.log(
    `\nCalls over ${boundMs} ms (steps and controls; Redis main thread over the call, from /proc):\n`,
  );
  if (over.length === 0) {
    console.log("none");
    return;
  }
  const count = (holds: (sample: CallSample, c: ThreadCounters) => boolean) =>
    over.filter(({ sample }) => holds(sample, sample.counters as ThreadCounters)).length;
  const steps = over.filter((entry) => entry.kind === "step");
  const mostCpu = Math.max(...steps.map(({ sample }) => (sample.counters as ThreadCounters).cpuNs / 1e6));
  console.log(
    [
      `${over.length} calls over ${boundMs} ms (${steps.length} steps, ${over.length - steps.length} controls):`,
      `${count((sample) => offCpuMs(sample) >= sample.scriptUs / 2000)} spent at least half their time off the CPU;`,
      `${count((_, c) => c.cpuNs / 1e6 <= boundMs)} did no more than ${boundMs} ms of CPU work in the whole call`,
      `(the steps at most ${steps.length > 0 ? mostCpu.toFixed(1) : "–"} ms);`,
      `${count((_, c) => c.waitNs / 1e6 >= boundMs / 2)} waited ${boundMs / 2} ms or more for a CPU;`,
      `${count((_, c) => c.stealTicks > 0)} saw machine steal; ${count((_, c) => c.minorFaults > 0)} had minor`,
      `and ${count((_, c) => c.majorFaults > 0)} major page faults.\n`,
    ].join(" "),
  );
  console.log(
    "| operation | call | script (ms) | Redis on CPU over the call (ms) | script off CPU, at least (ms) | waiting for a CPU (ms) | preemptions | minor faults | major faults | machine steal (ticks) |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const { operation, kind, sample } of over.slice(0, 40)) {
    const c = sample.counters as ThreadCounters;
    const cells = [
      (sample.scriptUs / 1000).toFixed(1),
      (c.cpuNs / 1e6).toFixed(1),
      offCpuMs(sample).toFixed(1),
      (c.waitNs / 1e6).toFixed(1),
      c.involuntarySwitches,
      c.minorFaults,
      c.majorFaults,
      c.stealTicks,
    ];
    console.log(`| ${operation} | ${kind} | ${cells.join(" | ")} |`);
  }
  if (over.length > 40) console.log(`\n(${over.length - 40} more not listed)`);
}

export function printReport(rows: readonly Row[], usPerRound: number): void {
  printSpreads(rows);
  console.log(
    `\nControl: rounds of HMGET + ZSCORE + HSET + DEL on three small keys (${usPerRound.toFixed(2)} µs a round at the end), as many as take the step's CPU time. "On CPU": the redis-server thread's time on a CPU over the whole call (request parsing and reply included), an upper bound of the script's own work.`,
  );
  printSlowCalls(rows);
  console.log("\nRedis's latency monitor during each operation (events of 10 ms or more, the slowest):\n");
  for (const row of rows.filter((entry) => entry.control.length > 0)) {
    const events = row.latency.map(([event, , , maxMs]) => `${event} ${maxMs} ms`).join(", ");
    console.log(`- ${row.operation} (load ${row.load.toFixed(1)}): ${events || "none"}`);
  }
}

/** The redis-server and kernel settings that could stall a script: persistence, defrag, lazy free, THP. */
export async function serverSettings(direct: IORedis): Promise<string> {
  const settings = (await direct.config("GET", "*")) as string[];
  const names = ["save", "appendonly", "activedefrag", "lazyfree-lazy-user-del", "jemalloc-bg-thread", "hz"];
  const shown = names.map((name) => `${name} "${settings[settings.indexOf(name) + 1]}"`);
  let thp = "unknown (no /sys)";
  try {
    thp = readFileSync("/sys/kernel/mm/transparent_hugepage/enabled", "utf8").trim();
  } catch {
    // Not Linux: the bench runs all the same.
  }
  return `${shown.join(", ")}; transparent huge pages ${thp}`;
}
