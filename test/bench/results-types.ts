/** The shape of `test/bench/results/latest.json`. */
import type { ColdStartResult } from "./cold-start.ts";
import type { CostResult } from "./cost.ts";
import type { IdleResult } from "./idle.ts";
import type { LatencyResult } from "./latency.ts";
import type { ScaleResult } from "./scale.ts";
import type { ThroughputResult } from "./throughput.ts";

export const sectionNames = [
  "cost",
  "throughput",
  "throughputTcp",
  "idle",
  "latency",
  "coldstart",
  "scale",
] as const;
export type SectionName = (typeof sectionNames)[number];

export interface SectionResults {
  cost: CostResult;
  throughput: ThroughputResult;
  /** The same table with nimbusq over TCP like BullMQ (issue 27). */
  throughputTcp: ThroughputResult;
  idle: IdleResult;
  latency: LatencyResult;
  coldstart: ColdStartResult;
  scale: ScaleResult;
}

export interface SectionOutcome<T> {
  measuredAt: string;
  quick: boolean;
  durationSeconds: number;
  result?: T;
  /** Why the section has no result. */
  error?: string;
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  redis: string;
  packages: Record<string, string>;
  commit: string;
}

export interface BenchResults {
  generatedAt: string;
  quick: boolean;
  /** Wall time of the run that wrote this file (sections merged from earlier runs keep their own). */
  totalSeconds: number;
  machine: MachineInfo;
  sections: { [K in SectionName]?: SectionOutcome<SectionResults[K]> };
}
