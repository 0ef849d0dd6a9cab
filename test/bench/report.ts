/**
 * Writes what a bench run measured: the raw results as JSON, BENCHMARKS.md (tables, findings, the
 * cost model) and the chart as SVG. The Markdown is generated from the JSON alone, so it can be
 * regenerated from a results file without measuring again.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, relative } from "node:path";
import { type Group, type Panel, renderChart } from "./chart.ts";
import type { CostResult, CostRow, IssueCase, IssueCostRow } from "./cost.ts";
import { assumptions, type CostModel, costModel } from "./cost-model.ts";
import { withHandKeptSections } from "./hand-kept.ts";
import type { Distribution, LatencyResult } from "./latency.ts";
import type { BenchResults, SectionName, SectionOutcome } from "./results-types.ts";
import type { NetworkProfile, ThroughputCase, ThroughputResult } from "./throughput.ts";
import { type ProcessorKind, processorLabels } from "./throughput-shared.ts";
import type { WakePath } from "./wake-lateness.ts";

export interface ReportPaths {
  json: string;
  markdown: string;
  svg: string;
}

/** BullMQ 6.7.0 as measured earlier on this machine (the benchmark issue), for orientation. */
export const earlierBullmq = {
  lifecyclePerJob: 33,
  failing3PerJob: 87,
  roundTripsPerJob: 2.03,
  idlePerHourPerQueue: 6504,
  jobsPerSecond: 17_440,
  enqueueToStartP50: 1.2,
  enqueueToStartP99: 4,
  latenessP99: 96,
  bundleMB: 1.2,
  importMs: 62,
};

/** The worker-engine issue's targets: billed commands per job (at most) and throughput ratios (at least). */
export const issueTargets = {
  costPerJob: { "backlog-c1": 18, trickle: 24, "backlog-c50": 10, "backlog-c50-final": 7.5 } as Record<
    IssueCase,
    number
  >,
  ratio: { loopback: 1.0, delayed: 1.5 } as Record<NetworkProfile, number>,
};

const wakePathLabels: Record<WakePath, string> = {
  "queue-wake": "`Queue.add` with `wake`",
  http: "the HTTP API",
  producer: "an SQS producer",
};

const issueCaseLabels: Record<IssueCase, string> = {
  "backlog-c1": "backlog, concurrency 1",
  trickle: "one job at a time into an idle queue (trickle)",
  "backlog-c50": "backlog, concurrency 50, all events",
  "backlog-c50-final": 'backlog, concurrency 50, `events: "final"`',
};

function profileLabel(t: { profile: NetworkProfile; delayMs: number }): string {
  return t.profile === "loopback" ? "loopback" : `+${t.delayMs} ms per round trip`;
}

// ---------------------------------------------------------------- formatting

function num(value: number | undefined, digits = 2): string {
  if (value === undefined || !Number.isFinite(value)) return "n/a";
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString("en-US");
  const fixed = value.toFixed(digits);
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

const percent = (value: number | undefined) =>
  value === undefined || !Number.isFinite(value) ? "n/a" : `${num(value * 100, 1)} %`;
const ms = (value: number | undefined) => `${num(value, value !== undefined && value < 10 ? 2 : 1)} ms`;
const kb = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${num(bytes / 1024, 1)} KB`);
const dollars = (value: number) =>
  Number.isFinite(value) ? `$${value >= 1 ? value.toFixed(2) : value.toFixed(3)}` : "n/a";

function ratio(ours: number | undefined, theirs: number | undefined): string {
  if (ours === undefined || theirs === undefined || !Number.isFinite(ours) || !theirs) return "n/a";
  return `${num(ours / theirs, 2)}×`;
}

function table(headers: string[], rows: string[][], numericFrom = 1): string {
  const align = headers.map((_, i) => (i >= numericFrom ? "---:" : "---"));
  return [
    `| ${headers.join(" | ")} |`,
    `| ${align.join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");
}

function missing(name: string, outcome: SectionOutcome<unknown> | undefined): string | undefined {
  if (!outcome) return `_Not measured: run \`npm run bench -- --only ${name}\`._`;
  if (outcome.error) return `_Not measured — the section failed: \`${outcome.error.slice(0, 300)}\`._`;
  return undefined;
}

function stamp(outcome: SectionOutcome<unknown>): string {
  return `_Measured ${outcome.measuredAt.slice(0, 16).replace("T", " ")} UTC in ${num(outcome.durationSeconds, 1)} s${outcome.quick ? ", **quick mode (tiny sizes)**" : ""}._`;
}

// ---------------------------------------------------------------- findings

interface Finding {
  text: string;
}

function costRow(rows: CostRow[] | undefined, pattern: string, batch: number): CostRow | undefined {
  return rows?.find((r) => r.pattern === pattern && r.batch === batch);
}

/** Per-batch fixed cost and per-job marginal cost of processing (lease + ack), from batch 1 and 10. */
function fixedAndMarginal(rows: CostRow[]): { fixed: number; perJob: number } | undefined {
  const one = costRow(rows, "backlog", 1);
  const ten = costRow(rows, "backlog", 10);
  if (!one || !ten) return undefined;
  const p1 = one.nimbusq.billedPerJob - one.nimbusq.addPerJob;
  const p10 = ten.nimbusq.billedPerJob - ten.nimbusq.addPerJob;
  const fixed = (p1 - p10) / 0.9;
  return { fixed, perJob: p1 - fixed };
}

function behind(results: BenchResults): Finding[] {
  const s = results.sections;
  const out: Finding[] = [];
  const cost = s.cost?.result;
  if (cost) {
    const split = fixedAndMarginal(cost.lifecycle);
    for (const row of [...cost.lifecycle, ...cost.failing]) {
      if (row.nimbusq.billedPerJob >= row.bullmq.billedPerJob) {
        out.push({
          text: `**Billed commands, ${row.pattern}, batch ${row.batch}${cost.failing.includes(row) ? ", failing" : ""}**: nimbusq ${num(row.nimbusq.billedPerJob)} per job vs BullMQ ${num(row.bullmq.billedPerJob)}.`,
        });
      }
    }
    const tight = cost.lifecycle.filter((r) => r.nimbusq.billedPerJob > r.bullmq.billedPerJob / 3);
    const batches = [...new Set(cost.lifecycle.map((r) => r.batch))].sort((a, b) => a - b);
    const holdsFrom = batches.find((b) => !tight.some((r) => r.batch >= b));
    if (tight.length > 0) {
      out.push({
        text: `**Billed commands above the one-third budget** at ${tight.map((r) => `${r.pattern} batch ${r.batch} (${num(r.nimbusq.billedPerJob)} vs BullMQ ${num(r.bullmq.billedPerJob)})`).join(", ")}. Cause: per-batch fixed costs. ${split ? `A lease plus an ack costs about ${num(split.fixed, 1)} commands per batch whatever it carries (the replay guards, the queue's meta, limiter and marker, the due-delayed promotion check, the next-due lookup, the ack's drained check) plus about ${num(split.perJob, 1)} per job` : "A lease plus an ack pays its queue-level reads and writes once per batch"}; at batch 1 every job pays the whole fixed part, and an arriving job also pays its own add call. Batching is the lever: ${holdsFrom !== undefined ? `the budget holds from batch ${holdsFrom} up` : "no batch size measured here meets it"}.`,
      });
    }
    const close = cost.failing.filter((r) => r.nimbusq.billedPerJob > r.bullmq.billedPerJob * 0.75);
    if (close.length > 0) {
      out.push({
        text: `**Failing jobs at small batches save little**: ${close.map((r) => `${r.pattern} batch ${r.batch}: ${num(r.nimbusq.billedPerJob)} vs BullMQ ${num(r.bullmq.billedPerJob)}`).join("; ")} billed commands per job. Cause: every attempt is its own lease and ack, so a job failing 3 times pays the per-batch fixed part three times when it is alone in its batch, plus the failure's own writes (failedReason, stacktrace, the move to delayed and back).`,
      });
    }
  }
  if (cost?.issueCases) {
    const over = cost.issueCases.filter(
      (row) => row.nimbusq.billedPerJob > issueTargets.costPerJob[row.case],
    );
    if (over.length > 0) {
      out.push({
        text: `**Billed commands per job above the worker-engine targets**: ${over.map((row) => `${issueCaseLabels[row.case]}: ${num(row.nimbusq.billedPerJob)} vs ≤ ${num(issueTargets.costPerJob[row.case])} (${row.nimbusqSetting}; BullMQ ${num(row.bullmq.billedPerJob)})`).join("; ")}. Cause: a job alone pays its add (10 commands: the guard read and write, the id, the hash, two events, the push, the marker, the attention index) and two worker calls — the lease, then the ack that finds the queue empty — each with its fixed part (the replay guard, the queue's meta and limiter or the locks' check, the due-delayed check, the peek, the drained check) beside the job's own 11 writes; folding the next lease into the ack needs a next job, which a trickle never has. This case is \`Queue.add\` and \`Worker.drain\` in one process; a lone job through the HTTP API or a producer, whose add hands the job to the invocation it starts, costs ${num(s.latency?.result?.enqueueToStart.nimbusqBilledPerJob)} with its invocation (the latency section).`,
      });
    }
  }
  const throughput = s.throughput?.result;
  const short = throughput?.cases.filter((c) => c.ratio < issueTargets.ratio[c.profile]) ?? [];
  if (throughput && short.length > 0) {
    const describe = (c: ThroughputCase) => {
      const target = issueTargets.ratio[c.profile];
      const limit = c.nimbusqOfLimit !== undefined ? `, ${percent(c.nimbusqOfLimit)} of N/d` : "";
      return `${profileLabel(c)}, ${processorLabels[c.processor]}, ${c.inFlight} in flight: nimbusq ${num(c.nimbusqMedian)} jobs/s vs BullMQ ${num(c.bullmqMedian)} (${num(c.ratio)}×, target ≥ ${num(target)}×, short by ${percent(1 - c.ratio / target)}${limit})`;
    };
    out.push({
      text: `**Throughput below the worker-engine targets** in ${short.length} of ${throughput.cases.length} cases: ${short.map(describe).join("; ")}. Where the time goes (profiled during the worker-engine work): the cases that miss are CPU-bound on this 2-core machine, where redis-server, the local REST server and the worker process share the cores. Each worker call is a chain — the worker encodes it, the REST server turns JSON into RESP and back, Redis runs the script — and with one call in flight every stage waits for the others (two calls in flight, the default from a batchSize of 20, bought 20–30 %); in Redis, a job's ack and lease cost about 44 µs, of which the commands themselves are about 14 µs and the rest is Lua calling them. Cases near the physical limit (N/d) cannot go further: at 50 in flight with 2 ms added, nimbusq runs at 80–90 % of it while BullMQ runs at 58–66 %. \`BENCH_CPU_PROF=DIR npm run bench -- --only throughput\` writes a CPU profile of each worker process.`,
    });
  }
  const latency = s.latency?.result;
  if (latency) {
    const e = latency.enqueueToStart;
    if (e.nimbusq.p50 > e.bullmq.p50 || e.nimbusq.p99 > e.bullmq.p99) {
      out.push({
        text: `**Enqueue → start**: nimbusq p50 ${ms(e.nimbusq.p50)} / p99 ${ms(e.nimbusq.p99)} vs BullMQ ${ms(e.bullmq.p50)} / ${ms(e.bullmq.p99)} on loopback. Cause: two HTTP requests come before the processor starts — the client's POST to the API (p50 ${ms(e.nimbusqHttpAdd.p50)} for its whole round trip, answered after the kick) and the add's one script call to the REST server, which also leases the job to the invocation it starts (lua/handOffJob.lua); the invocation makes no call before the processor. A BullMQ worker is already blocked in BZPOPMIN on an open TCP connection and the add wakes it. ${e.bareFetch ? `On this machine one bare loopback request (Node's fetch, a server that answers at once) takes ${ms(e.bareFetch.p50)} at p50, so two of them alone take ${ratio(2 * e.bareFetch.p50, e.bullmq.p50)} BullMQ's whole figure.` : ""}${e.delayed ? ` With ${num(e.delayed.delayMs)} ms added to every request on both sides — production is never loopback — nimbusq starts at p50 ${ms(e.delayed.nimbusq.p50)} against BullMQ's ${ms(e.delayed.bullmq.p50)} (${ratio(e.delayed.nimbusq.p50, e.delayed.bullmq.p50)}).` : ""} On Lambda the kicked invocation adds Lambda's own async-invoke delay on top.`,
      });
    }
    if (e.nimbusqBilledPerJob > 20) {
      out.push({
        text: `**A lone job over the HTTP API and its invocation costs ${num(e.nimbusqBilledPerJob)} billed commands** with all events (5 fewer with \`final\`: no add, active or drained events and no active count; both asserted in test/worker/handoff.test.ts) against ≤ 20 (≤ 14). Cause: what BullMQ's own readers need of one job is already more. Its writes (the hash, \`added\`, \`waiting\`, the push to active, the lock, \`active\`; then the removal from active, the lock's and the stalled entry's removal, the result, the completed set, \`completed\`, \`drained\`: 13) and the checks BullMQ's scripts make for them (pause and concurrency in meta, the rate limiter, jobs waiting ahead; the lock's owner, pending children, and wait, prioritized and active for \`drained\` and more work: 8), in two script calls, come to 23 with all events and 18 with \`final\` (no add, active or drained events, no active count). nimbusq adds 10 of its own: a replay guard per call (a retried request never adds or acks twice), the worker registry (count, register, leave: the cap on invocations), the sweeper's attention index at the add and the ack (lost handoffs and events to forward seen within a tick), the stalled snapshot (a lost invocation's job recovered at the first check), the next-delayed read and the metrics counter's check.`,
      });
    }
    const d = latency.delayedLateness;
    if (d.nimbusqBilledPerJob > d.bullmqBilledPerJob / 3) {
      out.push({
        text: `**Delayed jobs with the sweeper loop on cost ${num(d.nimbusqBilledPerJob)} billed commands each** (add to completion, ${num(d.jobs)} jobs due over ${num(d.spanMs / 1000)} s) vs BullMQ's ${num(d.bullmqBilledPerJob)}. Cause: the sweeper's loop wakes for each next due job (${num(d.nimbusqSweeperPasses)} passes for ${num(d.jobs)} jobs), each pass a billed sweep, even while a worker invocation is already waiting for those jobs; and the waiting worker leases and acks them a few at a time as they come due, paying the per-batch fixed part each time.`,
      });
    }
    if (d.nimbusq.p99 > d.bullmq.p99) {
      out.push({
        text: `**Delayed-job lateness**: nimbusq p99 ${ms(d.nimbusq.p99)} vs BullMQ ${ms(d.bullmq.p99)}. Cause: promotion waits for the sweeper's or a waiting worker's timer, then an HTTP lease.`,
      });
    }
  }
  const cold = s.coldstart?.result;
  const bull = cold?.bundles.find((b) => b.system === "bullmq");
  for (const b of cold?.bundles.filter((x) => x.system === "nimbusq") ?? []) {
    if (bull && b.importMs.median > bull.importMs.median) {
      out.push({
        text: `**Cold start, ${b.name}**: imports in ${ms(b.importMs.median)} vs BullMQ's ${ms(bull.importMs.median)}.`,
      });
    }
  }
  const idle = s.idle?.result;
  const sweeper = idle?.sweeper.find((x) => x.mode === "loop" && x.queues === 1 && x.eventForwarding);
  const bullIdle = idle?.bullmq.find((x) => x.workers === 1);
  if (sweeper && bullIdle && sweeper.perHour > bullIdle.perHour) {
    out.push({
      text: `**Idle cost**: the sweeper costs ${num(sweeper.perHour)} commands/hour vs BullMQ's ${num(bullIdle.perHour)}.`,
    });
  }
  return out;
}

// ---------------------------------------------------------------- sections

function machineSection(r: BenchResults): string {
  const m = r.machine;
  return table(
    ["", ""],
    [
      ["CPU", `${m.cpuModel}, ${m.cores} cores`],
      ["Memory", `${num(m.memoryGiB, 1)} GiB`],
      ["OS", m.os],
      ["Node", m.node],
      ["Redis", `redis-server ${m.redis} (Debian package), started by the bench, no persistence`],
      ["nimbusq", `${m.packages.nimbusq} at commit ${m.commit}`],
      [
        "Packages",
        Object.entries(m.packages)
          .map(([name, version]) => `${name} ${version}`)
          .join(", "),
      ],
    ],
    99,
  );
}

/** Throughput cases grouped by network profile and processor (one group per headline row). */
function throughputGroups(t: ThroughputResult | undefined): ThroughputCase[][] {
  const groups = new Map<string, ThroughputCase[]>();
  for (const c of t?.cases ?? []) {
    const key = `${c.profile}/${c.processor}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  return [...groups.values()];
}

function headline(r: BenchResults): string {
  const s = r.sections;
  const rows: string[][] = [];
  const cost = s.cost?.result;
  if (cost) {
    for (const row of cost.issueCases ?? []) {
      const target = issueTargets.costPerJob[row.case];
      rows.push([
        `Billed commands per job, ${issueCaseLabels[row.case]}`,
        num(row.nimbusq.billedPerJob),
        `${num(row.bullmq.billedPerJob)}${row.bullmqShared ? " (all events)" : ""}`,
        ratio(row.nimbusq.billedPerJob, row.bullmq.billedPerJob),
        `≤ ${num(target)}: ${row.nimbusq.billedPerJob <= target ? "met" : "**missed**"}`,
      ]);
    }
    const c50 = cost.issueCases?.find((row) => row.case === "backlog-c50");
    if (c50) {
      rows.push([
        "HTTP requests per job, backlog, batch / concurrency 50",
        num(c50.nimbusq.requestsPerJob, 3),
        `TCP (${earlierBullmq.roundTripsPerJob} round trips earlier)`,
        "",
        `≤ 0.05: ${c50.nimbusq.requestsPerJob <= 0.05 ? "met" : "**missed**"}`,
      ]);
    }
    if (cost.ceiling) {
      rows.push([
        `Jobs/s one Upstash database allows (${num(cost.ceiling.commandsPerSecond)} commands/s ÷ commands per job at concurrency 50)`,
        `${num(cost.ceiling.nimbusq)} (all events); ${num(cost.ceiling.nimbusqFinalEvents)} (final)`,
        num(cost.ceiling.bullmq),
        ratio(cost.ceiling.nimbusq, cost.ceiling.bullmq),
        "",
      ]);
    }
    const f1 = costRow(cost.failing, "backlog", 1);
    if (f1) {
      rows.push([
        "Billed commands per job failing 3 attempts, batch / concurrency 1",
        num(f1.nimbusq.billedPerJob),
        num(f1.bullmq.billedPerJob),
        ratio(f1.nimbusq.billedPerJob, f1.bullmq.billedPerJob),
        "",
      ]);
    }
  }
  const tp = s.throughput?.result;
  for (const group of throughputGroups(tp)) {
    const first = group[0] as ThroughputCase;
    const target = issueTargets.ratio[first.profile];
    const all = (pick: (c: ThroughputCase) => string) => group.map(pick).join(" / ");
    rows.push([
      `Throughput, ${profileLabel(first)}, ${processorLabels[first.processor]}, ${all((c) => String(c.inFlight))} in flight (jobs/s)`,
      all((c) => num(c.nimbusqMedian)),
      all((c) => num(c.bullmqMedian)),
      all((c) => `${num(c.ratio)}×`),
      `≥ ${num(target)}×: ${all((c) => (c.ratio >= target ? "met" : "**missed**"))}`,
    ]);
  }
  const idle = s.idle?.result;
  const deployment = (queues: number) =>
    idle?.sweeper.find((x) => x.mode === "loop" && x.queues === queues && x.eventForwarding);
  const bullIdle = idle?.bullmq.find((x) => x.workers === 1);
  const idleCases = [1, 10, 20].map(deployment).filter((x) => x !== undefined);
  if (idleCases.length > 0 && bullIdle) {
    const bull10 = idle?.bullmq.find((x) => x.workers === 10);
    rows.push([
      `Idle billed commands per hour per deployment (${idleCases.map((x) => x.queues).join(" / ")} queues)`,
      idleCases.map((x) => num(x.perHour)).join(" / "),
      `${num(bullIdle.perHour)} / ${num(bull10?.perHour)} (1 / 10 queues)`,
      ratio(deployment(1)?.perHour, bullIdle.perHour),
      `≤ 60: ${idleCases.every((x) => x.perHour <= 60) ? "met" : "**missed**"}`,
    ]);
  }
  if (idle?.queueEvents) {
    rows.push([
      "Idle QueueEvents, billed commands per hour (defaults)",
      num(idle.queueEvents.perHour),
      "about 360 (blocking XREAD, earlier)",
      "",
      `≤ 720: ${idle.queueEvents.perHour <= 720 ? "met" : "**missed**"}`,
    ]);
  }
  const latency = s.latency?.result;
  if (latency) {
    const e = latency.enqueueToStart;
    rows.push([
      "A lone job over the HTTP API and its invocation: billed commands (all events)",
      num(e.nimbusqBilledPerJob),
      num(e.bullmqBilledPerJob),
      ratio(e.nimbusqBilledPerJob, e.bullmqBilledPerJob),
      `≤ 20: ${e.nimbusqBilledPerJob <= 20 ? "met" : "**missed**"}`,
    ]);
    rows.push([
      "Enqueue → start p50 / p99",
      `${ms(e.nimbusq.p50)} / ${ms(e.nimbusq.p99)}`,
      `${ms(e.bullmq.p50)} / ${ms(e.bullmq.p99)}`,
      `${ratio(e.nimbusq.p50, e.bullmq.p50)} / ${ratio(e.nimbusq.p99, e.bullmq.p99)}`,
      `p50 ≤ 2×: ${e.nimbusq.p50 <= 2 * e.bullmq.p50 ? "met" : "**missed**"}`,
    ]);
    if (e.delayed) {
      const p = e.delayed;
      rows.push([
        `Enqueue → start p50 / p99 with ${num(p.delayMs)} ms added to every request on both sides`,
        `${ms(p.nimbusq.p50)} / ${ms(p.nimbusq.p99)}`,
        `${ms(p.bullmq.p50)} / ${ms(p.bullmq.p99)}`,
        `${ratio(p.nimbusq.p50, p.bullmq.p50)} / ${ratio(p.nimbusq.p99, p.bullmq.p99)}`,
        `p50 ≤ 2×: ${p.nimbusq.p50 <= 2 * p.bullmq.p50 ? "met" : "**missed**"} (the target is set on loopback)`,
      ]);
    }
    const d = latency.delayedLateness;
    rows.push([
      `Delayed-job lateness p50 / p99 (${num(d.jobs)} jobs over ${num(d.spanMs / 1000)} s)`,
      `${ms(d.nimbusq.p50)} / ${ms(d.nimbusq.p99)}`,
      `${ms(d.bullmq.p50)} / ${ms(d.bullmq.p99)}`,
      `${ratio(d.nimbusq.p50, d.bullmq.p50)} / ${ratio(d.nimbusq.p99, d.bullmq.p99)}`,
      `p99 ≤ 1 s: ${d.nimbusq.p99 <= 1000 ? "met" : "**missed**"}`,
    ]);
    const wake = latency.wakeLateness ?? [];
    if (wake.length > 0) {
      rows.push([
        `Delayed-job lateness p99 into an idle deployment (no sweeper tick), via ${wake.map((w) => wakePathLabels[w.path]).join(" / ")}`,
        wake.map((w) => ms(w.lateness.p99)).join(" / "),
        "",
        "",
        `p99 ≤ 1 s: ${wake.every((w) => w.lateness.p99 <= 1000) ? "met" : "**missed**"}`,
      ]);
    }
  }
  const cold = s.coldstart?.result;
  if (cold) {
    const ours = cold.bundles.filter((b) => b.system === "nimbusq");
    const worst = [...ours].sort((a, b) => b.importMs.median - a.importMs.median)[0];
    const bull = cold.bundles.find((b) => b.system === "bullmq");
    if (worst && bull) {
      rows.push([
        `Cold start: slowest bundle's import (${worst.name}), size`,
        `${ms(worst.importMs.median)}, ${kb(worst.bytes)}`,
        `${ms(bull.importMs.median)}, ${kb(bull.bytes)}`,
        ratio(worst.importMs.median, bull.importMs.median),
        `≤ 50 ms: ${ours.every((b) => b.importMs.median <= 50) ? "met" : "**missed**"}`,
      ]);
    }
    const http = ours.find((b) => b.name === "http");
    if (http) {
      rows.push([
        "HTTP bundle size",
        kb(http.bytes),
        bull ? kb(bull.bytes) : "",
        "",
        `≤ 300 KB: ${http.bytes <= 300 * 1024 ? "met" : "**missed**"}`,
      ]);
    }
  }
  if (rows.length === 0) return "_No section measured._";
  return table(["", "nimbusq", "BullMQ 6.7.0", "nimbusq / BullMQ", "budget"], rows);
}

function costSection(r: BenchResults): string {
  const outcome = r.sections.cost;
  const gap = missing("cost", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const c = outcome.result;
  const rows = (list: CostRow[]) =>
    list.map((row) => [
      row.pattern,
      String(row.batch),
      num(row.jobs),
      num(row.nimbusq.billedPerJob),
      num(row.nimbusq.addPerJob),
      num(row.nimbusq.crossCheckPerJob),
      num(row.bullmq.billedPerJob),
      ratio(row.nimbusq.billedPerJob, row.bullmq.billedPerJob),
    ]);
  const headers = [
    "pattern",
    "batch / concurrency",
    "jobs",
    "nimbusq per job",
    "of which the add",
    "nimbusq by INFO (cross-check)",
    "BullMQ per job",
    "nimbusq / BullMQ",
  ];
  const split = fixedAndMarginal(c.lifecycle);
  return [
    stamp(outcome),
    "",
    "Billed as Upstash bills: every command plus every `redis.call` inside a script. nimbusq is counted by the metering REST server and cross-checked with the redis-server's own `INFO commandstats`; BullMQ by `INFO commandstats`, its Worker started and idle (and one job through it, so its scripts are loaded) before the window opens. The window runs from the first add to the last completion plus 50 ms. At batch size B nimbusq leases and acks B jobs per call and BullMQ's Worker runs at concurrency B.",
    "",
    "- **backlog**: all jobs added at once (`addBulk`), then processed — the steady state;",
    "- **arrivals**: jobs arrive B at a time (`add` for one, `addBulk` for more), the next B once those are done — every batch pays the way from idle to busy.",
    "",
    issueCostSection(c),
    "",
    "### Lifecycle: add → lease → complete, no-op processor",
    "",
    table(headers, rows(c.lifecycle), 1),
    "",
    split
      ? `Processing cost splits into about **${num(split.fixed, 1)} commands per lease+ack pair** (fixed, whatever the batch holds) and **${num(split.perJob, 1)} per job**, so the per-job cost falls as the batch grows.`
      : "",
    "",
    `### A job failing 3 attempts (\`attempts: ${c.failingOptions.attempts}, backoff: { type: "${c.failingOptions.backoff.type}", delay: ${c.failingOptions.backoff.delay} }\`)`,
    "",
    table(headers, rows(c.failing), 1),
    "",
    "### Adds alone",
    "",
    table(
      ["", "nimbusq", "nimbusq by INFO", "BullMQ"],
      c.adds.map((a) => [a.case, num(a.nimbusq), num(a.nimbusqCrossCheck), num(a.bullmq)]),
    ),
    "",
    `A worker Lambda invocation also registers itself when it starts and removes itself when it ends (the sweeper reads the registry to size its fan-out): **${c.invocationOverhead} billed commands per invocation**, counted in the cost model below.`,
  ].join("\n");
}

/** The worker-engine issue's cases: nimbusq with the settings it names, BullMQ on the same work. */
function issueCostSection(c: CostResult): string {
  if (!c.issueCases) return "";
  return [
    "### The worker-engine cases (no-op processor)",
    "",
    "nimbusq with the settings each case names — the Worker's default `batchSize` where none is named — next to one BullMQ Worker on the same jobs. **Trickle**: one `add`, then one `Worker.drain` until the job is done (as a kicked serverless invocation runs), the next job only after that; BullMQ's Worker (concurrency 1) is running and idle between jobs. The worker invocation's own registration (below) is not in these figures. BullMQ has no events level: its all-events figure stands next to the `final` row. **Global-lock script calls**: script runs without `allow-key-locking`, which Upstash runs under its global lock and which alone may touch keys not in KEYS (read from disk under that lock); the REST server counts them (`globalLockCalls`). In a backlog they are the add and a drain's first call; the calls in between declare their keys.",
    "",
    table(
      [
        "case",
        "nimbusq setting",
        "jobs",
        "nimbusq per job",
        "of which the add",
        "nimbusq by INFO (cross-check)",
        "HTTP requests per job",
        "global-lock script calls per job",
        "BullMQ per job",
        "nimbusq / BullMQ",
        "target",
      ],
      c.issueCases.map((row: IssueCostRow) => {
        const target = issueTargets.costPerJob[row.case];
        return [
          issueCaseLabels[row.case],
          row.nimbusqSetting,
          num(row.jobs),
          num(row.nimbusq.billedPerJob),
          num(row.nimbusq.addPerJob),
          num(row.nimbusq.crossCheckPerJob),
          num(row.nimbusq.requestsPerJob, 3),
          num(row.nimbusq.globalLockPerJob, 4),
          `${num(row.bullmq.billedPerJob)} (${row.bullmqSetting.replace(/ \(.*\)$/, "")})`,
          ratio(row.nimbusq.billedPerJob, row.bullmq.billedPerJob),
          `≤ ${num(target)}: ${row.nimbusq.billedPerJob <= target ? "met" : "**missed**"}`,
        ];
      }),
      2,
    ),
    "",
    upstashCeilingText(c),
  ].join("\n");
}

function requestsSection(r: BenchResults): string {
  const outcome = r.sections.cost;
  const gap = missing("cost", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const c = outcome.result;
  const rows = c.lifecycle.map((row) => {
    const failing = costRow(c.failing, row.pattern, row.batch);
    return [
      row.pattern,
      String(row.batch),
      num(row.nimbusq.requestsPerJob, 3),
      failing ? num(failing.nimbusq.requestsPerJob, 3) : "n/a",
    ];
  });
  return [
    "HTTP requests to the REST server per job (nimbusq; the same runs as above). A lifecycle is three requests per batch — add, lease, ack — and a failing job one lease and one ack per attempt.",
    "",
    table(["pattern", "batch", "lifecycle", "failing 3 attempts"], rows, 1),
    "",
    `BullMQ talks TCP: its round trips are not visible in \`INFO\`; the earlier measurement on this machine counted ${earlierBullmq.roundTripsPerJob} round trips per job.`,
  ].join("\n");
}

/** The lower median of a case's rounds (the middle one of three), 0 for none. */
function medianOf(runs: number[]): number {
  return [...runs].sort((a, b) => a - b)[Math.floor((runs.length - 1) / 2)] ?? 0;
}

/** The columns both throughput tables open with, and each case's cells for them. */
const caseColumns = [
  "network",
  "processor",
  "in flight",
  "jobs",
  "nimbusq jobs/s",
  "BullMQ jobs/s",
  "nimbusq / BullMQ",
];

function caseCells(c: ThroughputCase): string[] {
  return [
    profileLabel(c),
    processorLabels[c.processor as ProcessorKind],
    String(c.inFlight),
    num(c.jobs),
    num(c.nimbusqMedian),
    num(c.bullmqMedian),
    `${num(c.ratio)}×`,
  ];
}

/** Every round's jobs/s, nimbusq | BullMQ. */
function roundsCell(c: ThroughputCase): string {
  return c.rounds.map((x) => `${num(x.nimbusq.jobsPerSecond)} \\| ${num(x.bullmq.jobsPerSecond)}`).join("; ");
}

/** Section 3b: the same cases with nimbusq over TCP, as BullMQ, and Redis's CPU per job beside it. */
function throughputTcpSection(r: BenchResults): string {
  const outcome = r.sections.throughputTcp;
  const gap = missing("throughputTcp", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const t = outcome.result;
  const cpu = (c: ThroughputCase, side: "nimbusq" | "bullmq") =>
    num(medianOf(c.rounds.map((x) => x[side].redisCpuUsPerJob ?? Number.NaN)), 1);
  const aims = issueTargets.ratio;
  return [
    stamp(outcome),
    "",
    `Issue 27's like-for-like run: the cases of section 3 with nimbusq over TCP too (\`createRedis({ url: "redis://…" })\`, ioredis), no REST server between: both Workers reach the same redis-server directly on loopback, and through the same proxy holding every chunk ${t.delayMs} ms in the delayed profile. Same jobs in flight, interleaved rounds (${t.rounds} per case), medians; at least 10,000 jobs a case. **Redis CPU per job**: redis-server's own CPU time (INFO \`used_cpu_user\` + \`used_cpu_sys\`) during the run, per job — the server's side of the cost, whatever the client. Aims (not tests): ≥ 1.0× BullMQ on loopback and ≥ 1.5× at +${t.delayMs} ms.`,
    "",
    table(
      [
        ...caseColumns,
        "aim",
        "Redis CPU per job, µs (nimbusq \\| BullMQ)",
        "rounds (nimbusq \\| BullMQ jobs/s)",
      ],
      t.cases.map((c) => [
        ...caseCells(c),
        `≥ ${num(aims[c.profile])}×: ${c.ratio >= aims[c.profile] ? "met" : "**missed**"}`,
        `${cpu(c, "nimbusq")} \\| ${cpu(c, "bullmq")}`,
        roundsCell(c),
      ]),
      2,
    ),
    "",
    deploymentCeilings(r, t),
  ].join("\n");
}

/**
 * Issue 27's question, from this run's figures: how many jobs/s one deployment allows on 1 and 10
 * Upstash databases (each throttled near 10,000 commands/s: billed commands per job at concurrency 50,
 * section 1) and on a Redis Cluster of N shards (no per-command throttle: Redis CPU per job, loopback,
 * no-op, 50 in flight), against the goal of 10,000 jobs/s.
 */
function deploymentCeilings(r: BenchResults, t: ThroughputResult): string {
  const c50 = r.sections.cost?.result?.issueCases?.find((x) => x.case === "backlog-c50");
  const noop = t.cases.find((c) => c.profile === "loopback" && c.processor === "no-op" && c.inFlight === 50);
  const cpuUs = noop
    ? medianOf(noop.rounds.map((x) => x.nimbusq.redisCpuUsPerJob ?? Number.NaN))
    : Number.NaN;
  if (!c50 || !Number.isFinite(cpuUs)) return "";
  const perDatabase = Math.floor(10_000 / c50.nimbusq.billedPerJob);
  const perShard = Math.floor(1e6 / cpuUs);
  const databases = Math.ceil(10_000 / perDatabase);
  return `**What one deployment allows** (from this run's figures, not measured at that scale): on Upstash, ${num(c50.nimbusq.billedPerJob)} billed commands per job at concurrency 50 (section 1) under a database's ~10,000 commands/s give about **${num(perDatabase)} jobs/s per database**, ${num(perDatabase * 10)} on 10 databases — the goal of **10,000 jobs/s** needs ${databases} databases with the shard map spreading queues over them (README, "Outgrowing one database": one queue's rate stays within one database's, since a queue lives on one). On Redis Cluster or ElastiCache nothing throttles commands; Redis's own CPU bounds a shard: ${num(cpuUs, 1)} µs of Redis CPU per job (no-op jobs, 50 in flight, loopback) is about **${num(perShard)} jobs/s per shard** on this machine's core, so ${perShard >= 10_000 ? "one shard already allows the goal" : `${Math.ceil(10_000 / perShard)} shards allow the goal`} and N shards about N × ${num(perShard)} — queues spread over the shards by their hash tags (the 3-master test: 9.68 commands per job on each, as standalone). The workers scale by invocations: one Worker ran ${num(noop?.nimbusqMedian ?? 0)} jobs/s with no-op jobs at 50 in flight; with jobs of d ms, 10,000 jobs/s needs about 10 × d jobs in flight across the invocations (100 for 10 ms jobs).`;
}

function throughputSection(r: BenchResults): string {
  const outcome = r.sections.throughput;
  const gap = missing("throughput", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const t = outcome.result;
  if (!t.cases.every((c) => c.profile)) {
    return "_Measured by an earlier version of the throughput benchmark: run `npm run bench -- --only throughput`._";
  }
  const lag = (c: ThroughputCase, side: "nimbusq" | "bullmq") =>
    c.processor === "no-op" ? "–" : num(medianOf(c.rounds.map((x) => x[side].processorMeanMs)), 1);
  return [
    stamp(outcome),
    "",
    `Processing only: every job is added (\`addBulk\`, not timed) before the worker starts; the clock runs in the worker's own process from "go" to the last job's completion. nimbusq's Worker and BullMQ's Worker each run in a child process of their own, with the same jobs in flight N: nimbusq one Worker with \`concurrency\` N and \`batchSize\` 2N (its default: N more leased jobs wait for a slot) draining over a local REST server without the billing meter or the declared-keys check (\`@upstash/redis\`), BullMQ one Worker with \`concurrency\` N over TCP (ioredis), both on the same redis-server. Rounds alternate nimbusq, BullMQ (${t.rounds} round${t.rounds > 1 ? "s" : ""} per case, after one warm-up run per side and profile); medians of the rounds.`,
    "",
    `- **Network profiles**: loopback as it is; and **+${t.delayMs} ms per round trip** — a REST server of its own delays every HTTP request ${t.delayMs} ms before running it (its \`delay\` fault, unlimited), and a TCP proxy in front of redis-server holds every chunk from BullMQ to Redis ${t.delayMs} ms (order kept per connection), so each nimbusq request and each BullMQ round trip pays the same ${t.delayMs} ms.${t.measuredDelayMs ? ` Measured with PINGs (median, delayed minus loopback): +${num(t.measuredDelayMs.rest)} ms per HTTP request, +${num(t.measuredDelayMs.tcp)} ms per TCP round trip (a 2 ms timer fires a little late).` : ""}`,
    `- **Processors**: no-op; 10 ms of I/O (\`setTimeout\`); variable — exponential with mean 10 ms, seeded by the job's index so both sides run the same duration for the same job.`,
    "- **Physical limit N/d**: with N jobs in flight and mean job duration d (the mean of the requested durations over the case's jobs), no worker exceeds N/d jobs/s; each median is also given as a fraction of it. The no-op processor has d ≈ 0 and no such limit: its rows measure the queue's own overhead. Timers overshoot: the measured job time (the processor's own wall time, median of the rounds) shows how much, and it grows when a worker process is short of CPU.",
    "- **Middle 80 %**: the rate between the completions of the 10th and the 90th percentile job — the run without its ramp-up and its tail, to tell a slow start or a long last batch from a slow steady state.",
    "- BullMQ 6.7.0's Worker fetches jobs one round trip at a time (its main loop awaits each fetch before the next; a finishing job brings the next one with its `moveToFinished`), so the added delay weighs on its ramp-up and refills.",
    "",
    table(
      [
        ...caseColumns,
        "target",
        "limit N/d",
        "nimbusq of N/d",
        "BullMQ of N/d",
        "middle 80 % of jobs, jobs/s (nimbusq \\| BullMQ)",
        "measured job time, ms (nimbusq \\| BullMQ)",
        "rounds (nimbusq \\| BullMQ jobs/s)",
      ],
      t.cases.map((c) => {
        const target = issueTargets.ratio[c.profile];
        return [
          ...caseCells(c),
          `≥ ${num(target)}×: ${c.ratio >= target ? "met" : "**missed**"}`,
          c.physicalLimit !== undefined ? num(c.physicalLimit) : "–",
          percent(c.nimbusqOfLimit).replace("n/a", "–"),
          percent(c.bullmqOfLimit).replace("n/a", "–"),
          `${num(c.nimbusqMiddleMedian)} \\| ${num(c.bullmqMiddleMedian)}`,
          `${lag(c, "nimbusq")} \\| ${lag(c, "bullmq")}`,
          roundsCell(c),
        ];
      }),
      2,
    ),
    "",
    upstashCeiling(r),
    "",
    t.cases.some((c) => c.rounds.some((x) => !x.nimbusq.complete || !x.bullmq.complete))
      ? "**Some runs hit their time limit before every job was done; their rate counts only finished jobs.**"
      : "",
  ].join("\n");
}

/** On Upstash, the plan's commands/s limit bounds jobs/s by the commands each job costs. */
function upstashCeiling(r: BenchResults): string {
  const cost = r.sections.cost?.result;
  return cost ? upstashCeilingText(cost) : "";
}

function upstashCeilingText(cost: CostResult): string {
  const plans =
    "On Upstash itself the plans throttle at 10,000 commands/s (16,000 on the largest fixed plans, reference §3.1), which bounds throughput by the commands a job costs";
  const c50 = cost.issueCases?.find((x) => x.case === "backlog-c50");
  const final = cost.issueCases?.find((x) => x.case === "backlog-c50-final");
  if (cost.ceiling && c50 && final) {
    const limit = cost.ceiling.commandsPerSecond;
    return `${plans}: ${num(limit)} ÷ billed commands per job at concurrency 50 gives about **${num(cost.ceiling.nimbusq)} jobs/s** for nimbusq with all events (${num(c50.nimbusq.billedPerJob)} commands per job), **${num(cost.ceiling.nimbusqFinalEvents)} jobs/s** with \`events: "final"\` (${num(final.nimbusq.billedPerJob)}), and **${num(cost.ceiling.bullmq)} jobs/s** for BullMQ (${num(c50.bullmq.billedPerJob)}) per database — a ceiling the local runs do not have.`;
  }
  const rows = cost.lifecycle.filter((x) => x.pattern === "backlog");
  const row = rows.find((x) => x.batch === 50) ?? rows.at(-1);
  if (!row) return "";
  const limit = 10_000;
  return `${plans}: at batch / concurrency ${row.batch}, about ${num(Math.round(limit / row.nimbusq.billedPerJob))} jobs/s for nimbusq (${num(row.nimbusq.billedPerJob)} commands per job) and ${num(Math.round(limit / row.bullmq.billedPerJob))} jobs/s for BullMQ (${num(row.bullmq.billedPerJob)}) per database, a ceiling the local runs do not have.`;
}

function idleSection(r: BenchResults): string {
  const outcome = r.sections.idle;
  const gap = missing("idle", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const i = outcome.result;
  const window = i.bullmq[0]?.windowSeconds ?? i.windowSeconds;
  const windowNote =
    window >= 299
      ? `BullMQ's idle Workers were counted over a **${num(window, 0)} s window** (${num(window / 60, 1)} minutes, the issue's 5) and scaled to an hour (× ${num(3600 / window, 1)}). The window runs in the background on redis-servers of their own while the other sections use the main one.`
      : `**BullMQ's idle Workers were counted over ${num(window, 0)} s only**, not the issue's 5 minutes${outcome.quick ? " (quick mode)" : " (a shorter `--idle-window` was asked for)"}, and extrapolated to an hour (× ${num(3600 / window, 1)}): expect the per-hour figure to be off by a BullMQ idle cycle or a stalled check.`;
  return [
    stamp(outcome),
    "",
    windowNote,
    "nimbusq's workers are Lambda functions invoked only when jobs wait: an idle queue costs them **0** commands. The sweeper's idle tick for the whole deployment is measured exactly on the metering REST server — each queue has done work first (a job completed and kept, a worker registered and gone), metrics go out every 5th pass, and the mean of ten steady ticks is multiplied by 60 ticks an hour (EventBridge `rate(1 minute)`). A tick reads the attention index (`<prefix>:nq:due`) once and sweeps only the queues due, so the cost no longer grows with the number of queues; an idle queue's metrics repeat its last report without reading it.",
    "",
    table(
      ["what", "per tick", "commands/hour", "per queue per hour"],
      [
        ...i.sweeper.map((s) => [
          `nimbusq sweeper, ${s.mode} mode, ${s.queues} queue${s.queues > 1 ? "s" : ""}, event forwarding ${s.eventForwarding ? "on (as deployed)" : "off"}`,
          num(s.perTick),
          num(s.perHour),
          num(s.perHourPerQueue),
        ]),
        ["nimbusq worker functions (not invoked when idle)", "–", "0", "0"],
        ...(i.queueEvents
          ? [
              [
                `nimbusq QueueEvents, defaults (poll.idleMs 5 s), counted over ${num(i.queueEvents.windowSeconds, 0)} s`,
                "–",
                num(i.queueEvents.perHour),
                "–",
              ],
            ]
          : []),
        ...i.bullmq.map((b) => [
          `BullMQ: ${b.workers} idle Worker${b.workers > 1 ? "s" : ""} (default settings), ${b.workers} queue${b.workers > 1 ? "s" : ""}`,
          "–",
          num(b.perHour),
          num(b.perHourPerQueue),
        ]),
      ],
    ),
    "",
    `BullMQ's commands in the window (one Worker): ${Object.entries(i.bullmq[0]?.byCommand ?? {})
      .map(([name, count]) => `${name} ${count}`)
      .join(", ")}.`,
  ].join("\n");
}

function distributionRow(label: string, d: Distribution): string[] {
  return [label, num(d.samples), ms(d.p50), ms(d.p99), ms(d.max), ms(d.mean)];
}

function latencySection(r: BenchResults): string {
  const outcome = r.sections.latency;
  const gap = missing("latency", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const l = outcome.result;
  const e = l.enqueueToStart;
  const d = l.delayedLateness;
  return [
    stamp(outcome),
    "",
    'Over a local stack assembled as `npm start` assembles it — the HTTP API (Hono on Node) with the worker kick, worker "Lambdas" run in-process with real deadlines (batch 50, concurrency 50), the sweeper in loop mode — all through the non-metering REST server, with a bench queue whose processor notes when it starts. Times are on one monotonic clock in one process.',
    "",
    `### Enqueue → start (${e.rounds} rounds × ${e.perRound} jobs, one at a time)`,
    "",
    "nimbusq: from just before `POST /queues/:q/jobs` to the processor's first line; the API adds the job and kicks the worker function, which registers itself, leases and runs. BullMQ: from just before `Queue.add` over TCP to its running Worker's processor (concurrency 50). The next job goes once the previous invocation has ended.",
    "",
    table(
      ["", "samples", "p50", "p99", "max", "mean"],
      [
        distributionRow("nimbusq (HTTP add + kick)", e.nimbusq),
        distributionRow("nimbusq: the POST's own round trip", e.nimbusqHttpAdd),
        ...(e.bareFetch ? [distributionRow("one bare loopback request (Node's fetch)", e.bareFetch)] : []),
        distributionRow("BullMQ (Queue.add → Worker)", e.bullmq),
      ],
    ),
    "",
    ...profiledSection(e.delayed),
    `Worker invocations per job in this test: ${num(e.nimbusqInvocationsPerJob)} (one kick per add). Every command Redis ran per job in these runs (INFO commandstats; nimbusq's whole path: the add, which leases the job to the invocation it starts, and the invocation's ack): nimbusq **${num(e.nimbusqBilledPerJob)}**, BullMQ **${num(e.bullmqBilledPerJob)}**.`,
    "",
    `### Delayed jobs: lateness (${num(d.jobs)} jobs due over ${num(d.spanMs / 1000)} s, ${d.rounds} rounds)`,
    "",
    "Jobs added in one bulk with `timestamp` and `delay` set, so each is due at a known time; lateness is the processor's start minus that due time (processedOn − due). nimbusq: one sweeper tick in loop mode sleeps until the next due job, promotes it and starts workers, which wait for delayed jobs due within 5 s and lease them as they come due. BullMQ: one Worker, concurrency 50.",
    "",
    table(
      ["", "samples", "p50", "p99", "max", "mean"],
      [
        distributionRow("nimbusq (sweeper loop + workers)", d.nimbusq),
        distributionRow("BullMQ Worker", d.bullmq),
      ],
    ),
    "",
    `nimbusq used ${num(d.nimbusqWorkerInvocations)} worker invocation(s) and ${num(d.nimbusqSweeperPasses)} sweeper passes per round. Every command Redis ran per job, add to completion (INFO commandstats): nimbusq **${num(d.nimbusqBilledPerJob)}**, BullMQ **${num(d.bullmqBilledPerJob)}**.`,
    ...wakeSection(l.wakeLateness ?? []),
  ].join("\n");
}

/** Enqueue → start under the network profile (test/bench/latency-profiled.ts). */
function profiledSection(p: LatencyResult["enqueueToStart"]["delayed"]): string[] {
  if (!p) return [];
  return [
    `With ${num(p.delayMs)} ms added to every network request on both sides (${p.rounds} rounds × ${p.perRound} jobs): nimbusq's POST to the API and each request to the REST server; each of BullMQ's Redis round trips. The worker "Lambda" is still invoked in-process (Lambda's own async-invoke delay is not modelled).`,
    "",
    table(
      ["", "samples", "p50", "p99", "max", "mean"],
      [
        distributionRow(`nimbusq, +${num(p.delayMs)} ms a request`, p.nimbusq),
        distributionRow(`BullMQ, +${num(p.delayMs)} ms a round trip`, p.bullmq),
      ],
    ),
    "",
  ];
}

/** Delayed jobs through each producer path into an idle deployment (test/bench/wake-lateness.ts). */
function wakeSection(wake: NonNullable<LatencyResult["wakeLateness"]>): string[] {
  if (wake.length === 0) return [];
  return [
    "",
    `### Delayed jobs into an idle deployment, through each producer path (${wake[0]?.jobs} jobs each, due ${num((wake[0]?.delayMs ?? 0) / 1000)} s after their add)`,
    "",
    "No sweeper tick runs (in production the next is up to a minute away): a job is on time only because its add woke the worker with `wakeAt` — `Queue`'s `wake` hook, the HTTP API's kick, an SQS producer's kick. Lateness is the processor's start minus the due time.",
    "",
    table(
      ["", "samples", "p50", "p99", "max", "mean"],
      wake.map((w) => distributionRow(wakePathLabels[w.path], w.lateness)),
    ),
  ];
}

function coldStartSection(r: BenchResults): string {
  const outcome = r.sections.coldstart;
  const gap = missing("coldstart", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const c = outcome.result;
  return [
    stamp(outcome),
    "",
    `Each function bundled as \`npm run build\` bundles it (esbuild, minified ESM, AWS SDK left to the runtime), plus BullMQ 6.7.0 bundled the same way from a handler importing \`Queue\` and \`Worker\`, and an empty handler as the baseline. Each is imported in a fresh \`node\` process (${c.runs} runs each, interleaved); module evaluation only — Lambda's own init and a 256 MB share of a vCPU add to these.`,
    "",
    table(
      ["bundle", "size", "gzip", "import median", "min – max"],
      c.bundles.map((b) => [
        b.system === "bullmq"
          ? `BullMQ: ${b.name}`
          : b.system === "baseline"
            ? `baseline: ${b.name}`
            : `nimbusq: ${b.name}`,
        kb(b.bytes),
        kb(b.gzipBytes),
        ms(b.importMs.median),
        `${ms(b.importMs.min)} – ${ms(b.importMs.max)}`,
      ]),
    ),
  ].join("\n");
}

function flatness(values: number[], unit: string): string {
  const finite = values.filter((v) => Number.isFinite(v) && v > 0);
  if (finite.length < 2) return "n/a";
  const growth = Math.max(...finite) / Math.min(...finite);
  return growth <= 2 ? `flat (within ×${num(growth)})` : `**grows ×${num(growth)}** (${unit})`;
}

function scaleSection(r: BenchResults): string {
  const outcome = r.sections.scale;
  const gap = missing("scale", outcome);
  if (gap || !outcome?.result) return gap ?? "";
  const s = outcome.result;
  return [
    stamp(outcome),
    "",
    `Queues filled directly over TCP by a Lua loader (minimal job hashes). One lease and one ack of ${s.batch} jobs, ${s.leaseAck[0]?.reps ?? 0} times at each size (medians), timed end to end through the non-metering REST server and on the Redis side (the EVALSHA's time in \`INFO commandstats\`, which covers every \`redis.call\` the script makes). The Redis-side time is the one to judge growth by: the end-to-end time is mostly HTTP and noise on this machine.`,
    "",
    table(
      ["jobs waiting", "fill time", "lease (end to end)", "lease (Redis)", "ack (end to end)", "ack (Redis)"],
      s.leaseAck.map((x) => [
        num(x.waiting),
        ms(x.fillMs),
        ms(x.leaseMs),
        `${num(x.leaseRedisUs)} µs`,
        ms(x.ackMs),
        `${num(x.ackRedisUs)} µs`,
      ]),
    ),
    "",
    `Lease: ${flatness(
      s.leaseAck.map((x) => x.leaseRedisUs),
      "Redis-side",
    )}; ack: ${flatness(
      s.leaseAck.map((x) => x.ackRedisUs),
      "Redis-side",
    )}. Taking jobs pops from the ends of the wait list and promotion reads the due range of the delayed set, so neither depends on how many jobs wait.`,
    "",
    table(
      ["delayed jobs", "of which due", "sweep (end to end)", "sweep (Redis)", "promoted"],
      s.sweeps.map((x) => [
        num(x.delayed),
        num(x.due),
        ms(x.sweepMs),
        `${num(x.sweepRedisUs)} µs`,
        num(x.promoted),
      ]),
    ),
    "",
    `Sweep: ${flatness(
      s.sweeps.map((x) => x.sweepRedisUs),
      "Redis-side",
    )} as the delayed set grows; its cost follows the number of due jobs it promotes (each is moved, its hash updated and an event written), not the size of the set.`,
  ].join("\n");
}

function costModelSection(model: CostModel | undefined): string {
  if (!model) return "_Needs the cost section (batch 1 and batch 10 or 50 rows)._";
  const a = assumptions;
  const out: string[] = [
    "List prices: Upstash pay-as-you-go **$0.20 per 100K commands** (every command and every `redis.call`); Lambda **$0.20 per 1M requests** and **$0.0000133334 per GB-second** (arm64); SQS standard **$0.40 per 1M requests**; QStash **$1 per 100K messages** (list price at time of writing, as given by the project's reference notes from a third-party compiled price list — check Upstash's page before relying on it).",
    "",
    "Formulas, per million jobs:",
    "",
    "```",
    "nimbusq   = 1e6 × (cmds_per_job × $0.20/100K)",
    "          + 1e6 × inv_per_job × ($0.20/1M + 0.25 GB × t_inv × $0.0000133334)",
    `          t_inv = 2 × RTT (register, unregister) + batches × (2 × RTT (lease, ack) + batch processing time)`,
    `          cmds_per_job = measured billed commands per job + ${"invocation overhead"} × inv_per_job`,
    "SQS       = 1e6 × requests_per_job × $0.40/1M + Lambda(inv_per_job = 1/batch, t_inv = batch processing time)",
    "          requests_per_job = (send + receive + delete) / batch",
    "QStash    = 1e6 × $1/100K + Lambda(inv_per_job = 1, t_inv = job processing time)",
    "```",
    "",
    `Assumptions: ${a.memoryGb * 1024} MB functions; RTT = ${a.redisRoundTripMs} ms per Upstash request from Lambda in the same region (not measured here; the local REST server answers in about a millisecond); the processor's own time is the same work whichever queue feeds it, so it is priced in two variants — a no-op (queue overhead alone, Lambda bills at least 1 ms) and ${a.ioJobMs} ms of I/O per job, run concurrently within a batch; SQS's event source mapping batch is ${a.sqsBatch} (its default) and its pollers' empty receives are not counted; message sizes under 64 KB. Measured counts come from the cost section (backlog rows for the steady case, arrivals at batch 1 for the sparse one).`,
    "",
  ];
  for (const scenario of model.scenarios) {
    out.push(`### ${scenario.name}`, "", scenario.description, "");
    out.push(
      table(
        [
          "option",
          "queue charges",
          "basis",
          "Lambda requests",
          "Lambda duration (no-op)",
          "total (no-op)",
          `Lambda duration (${a.ioJobMs} ms jobs)`,
          `total (${a.ioJobMs} ms jobs)`,
        ],
        scenario.options.map((o) => [
          o.option,
          dollars(o.queue),
          o.queueDetail,
          dollars(o.lambdaRequests),
          dollars(o.lambdaDurationNoop),
          `**${dollars(o.totalNoop)}**`,
          dollars(o.lambdaDurationIo),
          `**${dollars(o.totalIo)}**`,
        ]),
        1,
      ),
      "",
    );
  }
  out.push(costReading(model), "");
  out.push(
    "### Fixed monthly cost of an idle queue",
    "",
    table(
      ["", "per queue per month", "basis"],
      model.monthly.map((m) => [m.option, dollars(m.perQueue), m.detail]),
    ),
  );
  return out.join("\n");
}

/** Plain words on where nimbusq stands in the model: the cheapest option is not always nimbusq. */
function costReading(model: CostModel): string {
  const lines: string[] = [];
  for (const scenario of model.scenarios) {
    const ours = scenario.options.find((o) => o.option.startsWith("nimbusq"));
    if (!ours) continue;
    const others = scenario.options.filter((o) => o !== ours && !o.option.startsWith("BullMQ"));
    const cheaper = others.filter((o) => o.totalNoop < ours.totalNoop);
    const bull = scenario.options.find((o) => o.option.startsWith("BullMQ"));
    const parts = cheaper.map(
      (o) => `${o.option} (${dollars(o.totalNoop)}, ${num(ours.totalNoop / o.totalNoop, 1)}× cheaper)`,
    );
    lines.push(
      `- **${scenario.name}**: nimbusq ${dollars(ours.totalNoop)} per million jobs${
        bull
          ? ` (BullMQ's Redis commands alone cost ${num(bull.totalNoop / ours.totalNoop, 1)}× as much on the same plan)`
          : ""
      }${parts.length > 0 ? `; **more than ${parts.join(" and ")}**` : ""}. ${
        parts.length > 0
          ? "The gap is Upstash's per-command price: every `redis.call` of a lease and an ack is billed, while SQS bills a request per batch of messages and QStash a flat price per message."
          : ""
      }`,
    );
  }
  const steady = model.scenarios[0]?.options.find((o) => o.option.startsWith("nimbusq"));
  const perJob = steady ? steady.queue / 1_000_000 / (0.2 / 100_000) : undefined;
  if (perJob) {
    const breakEven = 10 / (0.2 / 100_000);
    lines.push(
      `- Upstash's fixed plans bill no per-command charge ($10/month for 250 MB at up to 10,000 commands/s, reference §3.1): past ${num(breakEven / 1e6, 1)}M commands a month — about ${num(breakEven / perJob / 1000, 0)}K jobs at ${num(perJob)} commands each — a fixed plan costs less than pay-as-you-go and the queue charge stops growing with volume (until the commands/s cap).`,
    );
  }
  return lines.join("\n");
}

function earlierSection(r: BenchResults): string {
  const s = r.sections;
  const cost = s.cost?.result;
  const tp = s.throughput?.result?.cases.find(
    (c) => c.profile === "loopback" && c.processor === "no-op" && c.inFlight === 50,
  );
  const lat = s.latency?.result;
  const idle = s.idle?.result?.bullmq.find((b) => b.workers === 1);
  const bull = s.coldstart?.result?.bundles.find((b) => b.system === "bullmq");
  const e = earlierBullmq;
  return table(
    ["BullMQ 6.7.0", "earlier measurement (the issue)", "this run"],
    [
      [
        "billed commands per job, lifecycle, concurrency 1",
        num(e.lifecyclePerJob),
        num(costRow(cost?.lifecycle, "backlog", 1)?.bullmq.billedPerJob),
      ],
      [
        "billed commands per job failing 3 attempts",
        num(e.failing3PerJob),
        num(costRow(cost?.failing, "backlog", 1)?.bullmq.billedPerJob),
      ],
      ["round trips per job", num(e.roundTripsPerJob), "not measured (TCP)"],
      ["idle commands per hour per queue", num(e.idlePerHourPerQueue), num(idle?.perHourPerQueue)],
      [
        "jobs/s, no-op, concurrency 50",
        num(e.jobsPerSecond),
        tp ? `${num(tp.bullmqMedian)} (processing only, loopback)` : "n/a",
      ],
      [
        "enqueue → start p50 / p99",
        `${ms(e.enqueueToStartP50)} / ${ms(e.enqueueToStartP99)}`,
        lat ? `${ms(lat.enqueueToStart.bullmq.p50)} / ${ms(lat.enqueueToStart.bullmq.p99)}` : "n/a",
      ],
      ["delayed lateness p99", ms(e.latenessP99), lat ? ms(lat.delayedLateness.bullmq.p99) : "n/a"],
      [
        "bundle size, import",
        `${e.bundleMB} MB, ${ms(e.importMs)}`,
        bull ? `${num(bull.bytes / 1024 / 1024, 2)} MB, ${ms(bull.importMs.median)}` : "n/a",
      ],
    ],
  );
}

// ---------------------------------------------------------------- chart

function chartPanels(r: BenchResults, model: CostModel | undefined): Panel[] {
  const s = r.sections;
  const panels: Panel[] = [];
  const cost = s.cost?.result;
  const pair = (label: string, ours: number | undefined, theirs: number | undefined): Group => ({
    label,
    bars: [
      { series: "nimbusq", value: ours ?? Number.NaN },
      { series: "bullmq", value: theirs ?? Number.NaN },
    ],
  });
  if (cost) {
    const backlog = (rows: CostRow[]) => rows.filter((x) => x.pattern === "backlog");
    panels.push({
      title: "Billed Redis commands per job",
      note: "add → lease → complete, backlog; by batch size / concurrency — fewer is better",
      groups: backlog(cost.lifecycle).map((x) =>
        pair(`batch ${x.batch}`, x.nimbusq.billedPerJob, x.bullmq.billedPerJob),
      ),
    });
    if (cost.issueCases) {
      const labels: Record<IssueCase, string> = {
        "backlog-c1": "backlog, conc. 1",
        trickle: "trickle (1 at a time)",
        "backlog-c50": "backlog, conc. 50",
        "backlog-c50-final": "conc. 50, final events",
      };
      panels.push({
        title: "Billed commands per job, worker-engine cases",
        note: "nimbusq default batchSize unless named; BullMQ on the same work — fewer is better",
        groups: cost.issueCases.map((x) =>
          pair(labels[x.case], x.nimbusq.billedPerJob, x.bullmq.billedPerJob),
        ),
      });
    }
    panels.push({
      title: "Billed commands per job failing 3 attempts",
      note: "backlog; by batch size / concurrency — fewer is better",
      groups: backlog(cost.failing).map((x) =>
        pair(`batch ${x.batch}`, x.nimbusq.billedPerJob, x.bullmq.billedPerJob),
      ),
    });
  }
  const tp = s.throughput?.result;
  const short: Record<ProcessorKind, string> = {
    "no-op": "no-op",
    "io-10ms": "10 ms I/O",
    variable: "variable",
  };
  for (const profile of ["loopback", "delayed"] as const) {
    const cases = tp?.cases.filter((c) => c.profile === profile) ?? [];
    const first = cases[0];
    if (!first) continue;
    panels.push({
      title: `Throughput, jobs/s, ${profileLabel(first)}`,
      note: "processing only, by processor and jobs in flight; median of rounds — more is better",
      groups: cases.map((c) => ({
        label: `${short[c.processor]}, ${c.inFlight}`,
        bars: [
          { series: "nimbusq", value: c.nimbusqMedian, text: `${num(c.nimbusqMedian)} · ${num(c.ratio)}×` },
          { series: "bullmq", value: c.bullmqMedian },
        ],
      })),
    });
  }
  const idle = s.idle?.result;
  if (idle) {
    const sweeper = (queues: number) =>
      idle.sweeper.find((x) => x.mode === "loop" && x.queues === queues && x.eventForwarding)
        ?.perHourPerQueue;
    const bull = (workers: number) => idle.bullmq.find((x) => x.workers === workers)?.perHourPerQueue;
    panels.push({
      title: "Idle cost, billed commands per hour per queue",
      note: "nimbusq: sweeper tick × 60 (workers idle cost 0); BullMQ: idle Worker — fewer is better",
      groups: [pair("1 queue", sweeper(1), bull(1)), pair("10 queues", sweeper(10), bull(10))],
    });
  }
  const lat = s.latency?.result;
  if (lat) {
    const e = lat.enqueueToStart;
    const d = lat.delayedLateness;
    panels.push({
      title: "Latency, milliseconds",
      note: "enqueue → start (nimbusq over HTTP + kick); delayed-job lateness — less is better",
      groups: [
        pair("enqueue→start p50", e.nimbusq.p50, e.bullmq.p50),
        pair("enqueue→start p99", e.nimbusq.p99, e.bullmq.p99),
        pair("delayed lateness p50", d.nimbusq.p50, d.bullmq.p50),
        pair("delayed lateness p99", d.nimbusq.p99, d.bullmq.p99),
      ],
    });
  }
  const cold = s.coldstart?.result;
  if (cold) {
    panels.push({
      title: "Cold start: bundle import, milliseconds",
      note: "fresh node process, median; bundle size after the value — less is better",
      groups: cold.bundles.map((b) => ({
        label: b.system === "bullmq" ? "BullMQ" : b.name,
        bars: [
          {
            series: b.system === "nimbusq" ? "nimbusq" : b.system === "bullmq" ? "bullmq" : "other",
            value: b.importMs.median,
            text: `${num(b.importMs.median, 1)} ms · ${kb(b.bytes)}`,
          },
        ],
      })),
    });
  }
  const steady = model?.scenarios[0];
  if (steady) {
    panels.push({
      title: "Dollars per million jobs (list prices)",
      note: `${steady.name}; no-op processor — less is better`,
      groups: steady.options.map((o) => ({
        label: o.option.startsWith("BullMQ") ? "BullMQ (Redis only)" : o.option.replace(/ \(.*\)$/, ""),
        bars: [
          {
            series: o.option.startsWith("nimbusq")
              ? "nimbusq"
              : o.option.startsWith("BullMQ")
                ? "bullmq"
                : "other",
            value: o.totalNoop,
            text: dollars(o.totalNoop),
          },
        ],
      })),
    });
  }
  return panels;
}

// ---------------------------------------------------------------- output

export function renderMarkdown(r: BenchResults, paths: ReportPaths): string {
  const model = costModel(r.sections.cost?.result, r.sections.idle?.result);
  const findings = behind(r);
  const svgLink = relative(dirname(paths.markdown), paths.svg).split("\\").join("/");
  const jsonLink = relative(dirname(paths.markdown), paths.json).split("\\").join("/");
  const sectionTimes = (Object.entries(r.sections) as [SectionName, SectionOutcome<unknown>][])
    .map(([name, o]) => `${name} ${num(o.durationSeconds, 1)} s`)
    .join(", ");
  return [
    "# Benchmarks",
    "",
    `Generated by \`npm run bench\` (scripts in \`test/bench/\`) on ${r.generatedAt.slice(0, 10)}; do not edit by hand, except the sections a regeneration keeps (test/bench/hand-kept.ts: "Maintenance at 1,000,000 jobs", reported by its own bench). Raw numbers: [\`${jsonLink}\`](${jsonLink}).`,
    r.quick
      ? "\n> **Quick mode**: tiny sizes for a smoke run. These numbers say the scripts work, not how fast anything is.\n"
      : "",
    `The run took ${num(r.totalSeconds, 1)} s (${sectionTimes}).`,
    "",
    `![nimbusq next to BullMQ 6.7.0](${svgLink})`,
    "",
    "## Machine",
    "",
    machineSection(r),
    "",
    "## How",
    "",
    "- One redis-server is started for the run; nimbusq and BullMQ 6.7.0 run against it in the same run, alternating (nimbusq, BullMQ, nimbusq, BullMQ…), each on fresh queues, the keyspace flushed between timed runs.",
    "- nimbusq talks to Redis only through the local Upstash-compatible REST server with the real `@upstash/redis` client; BullMQ over TCP with ioredis, as each is meant to run.",
    "- Counts go through a REST server that meters billed commands exactly (it diffs `INFO commandstats` around each script request, which serialises script requests); timings go through a second REST server on the same redis-server with metering off, as Upstash has no such step.",
    "- Everything — redis-server, the REST servers, the HTTP API, the workers and the load — shares this machine's cores, so absolute timings are low-end; the ratios are the point. Medians over rounds where timing matters.",
    "",
    "## Headline",
    "",
    headline(r),
    "",
    "## Where nimbusq is behind BullMQ or its budgets",
    "",
    findings.length > 0
      ? findings.map((f) => `- ${f.text}`).join("\n")
      : "Nowhere in this run's measurements.",
    "",
    "## 1. Billed Redis commands per job",
    "",
    costSection(r),
    "",
    "## 2. HTTP requests per job",
    "",
    requestsSection(r),
    "",
    "## 3. Throughput",
    "",
    throughputSection(r),
    "",
    "### 3b. Throughput with nimbusq over TCP",
    "",
    throughputTcpSection(r),
    "",
    "## 4. Idle cost",
    "",
    idleSection(r),
    "",
    "## 5. Latency",
    "",
    latencySection(r),
    "",
    "## 6. Cold start",
    "",
    coldStartSection(r),
    "",
    "## 7. Scale",
    "",
    scaleSection(r),
    "",
    "## 8. Cost model: dollars per million jobs",
    "",
    costModelSection(model),
    "",
    "## BullMQ: earlier figures and this run",
    "",
    earlierSection(r),
    "",
  ]
    .join("\n")
    .replace(/\n{3,}/g, "\n\n");
}

export function renderSvg(r: BenchResults): string {
  const model = costModel(r.sections.cost?.result, r.sections.idle?.result);
  const m = r.machine;
  return renderChart(
    `nimbusq vs BullMQ 6.7.0${r.quick ? " (quick mode: smoke sizes)" : ""}`,
    `npm run bench, ${r.generatedAt.slice(0, 10)} — ${m.cores} cores ${m.cpuModel}, Node ${m.node}, Redis ${m.redis}; nimbusq over the local Upstash-compatible REST server, BullMQ over TCP, same redis-server`,
    chartPanels(r, model),
  );
}

export async function writeReport(results: BenchResults, paths: ReportPaths): Promise<void> {
  for (const file of [paths.json, paths.markdown, paths.svg]) await mkdir(dirname(file), { recursive: true });
  await writeFile(paths.json, `${JSON.stringify(results, null, 2)}\n`);
  const previous = await readFile(paths.markdown, "utf8").catch(() => undefined);
  await writeFile(paths.markdown, withHandKeptSections(renderMarkdown(results, paths), previous));
  await writeFile(paths.svg, renderSvg(results));
}
