/**
 * What the throughput section's parent and its worker processes share: the processors, the seeded job
 * durations (so nimbusq and BullMQ run the same duration for the same job index) and the messages.
 */

export type ProcessorKind = "no-op" | "io-10ms" | "variable";
export type System = "nimbusq" | "bullmq";
/** The events level the engine takes as a Worker/Queue option (absent on engines before v2). */
export type EventsLevel = "all" | "final" | "none";

export const processorLabels: Record<ProcessorKind, string> = {
  "no-op": "no-op",
  "io-10ms": "10 ms I/O",
  variable: "variable (exponential, mean 10 ms)",
};

export const ioMs = 10;
export const variableMeanMs = 10;
const seed = 0x6e696d62;

/** A 32-bit mix of the job index and the seed (splitmix32's finaliser), as a number in [0, 1). */
function uniform(n: number): number {
  let x = (Math.imul(n + 1, 0x9e3779b9) ^ seed) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x21f0aaad) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x735a2d97) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  return x / 2 ** 32;
}

/** How long job number `n` takes (ms) with this processor: the same on both sides. */
export function durationMs(kind: ProcessorKind, n: number): number {
  if (kind === "no-op") return 0;
  if (kind === "io-10ms") return ioMs;
  return -variableMeanMs * Math.log(1 - uniform(n));
}

/** The mean requested duration over jobs 0 … jobs-1 (ms); 0 for the no-op processor. */
export function meanDurationMs(kind: ProcessorKind, jobs: number): number {
  let sum = 0;
  for (let n = 0; n < jobs; n++) sum += durationMs(kind, n);
  return jobs > 0 ? sum / jobs : 0;
}

export interface PrepareMessage {
  type: "prepare";
  system: System;
  queue: string;
  prefix: string;
  processor: ProcessorKind;
  /** nimbusq: concurrency = inFlight, batchSize 2 × inFlight (its default); BullMQ: concurrency = inFlight. */
  inFlight: number;
  jobs: number;
  /** The run gives up after this long (ms) and reports what it finished. */
  limitMs: number;
  /** nimbusq's REST endpoint. */
  rest?: { url: string; token: string };
  /** BullMQ's TCP endpoint (redis-server, or the delaying proxy in front of it). */
  tcp?: { host: string; port: number };
  /** nimbusq over TCP too (createRedis with a redis:// URL to `tcp`), not over REST. */
  nimbusqTcp?: boolean;
  events?: EventsLevel;
}

export type ParentMessage = PrepareMessage | { type: "go" } | { type: "exit" };

export interface RunReport {
  done: number;
  /** From "go" to the last job's completion (ms), measured in the worker process. */
  elapsedMs: number;
  /** The processors' own mean wall time (ms), timers' overshoot included. */
  processorMeanMs: number;
  /** Jobs/s between the completions of the 10th and the 90th percentile job: the run without its ramp-up and tail. */
  middleJobsPerSecond: number;
}

export type ChildMessage =
  | { type: "ready" }
  | ({ type: "done" } & RunReport)
  | { type: "error"; message: string };
