/**
 * Which Redis structure holds each job type that `getJobs`/`getJobCounts` accept (BullMQ's names,
 * `wait` an alias of `waiting`, `paused` the legacy 5.x list).
 */
import type { QueueKeys } from "../redis/keys.ts";
import type { JobType } from "../types.ts";
import { Checker } from "../validate.ts";

const structureOf: Record<string, { suffix: keyof QueueKeys; kind: "list" | "zset" }> = {
  waiting: { suffix: "wait", kind: "list" },
  wait: { suffix: "wait", kind: "list" },
  paused: { suffix: "legacyPaused", kind: "list" },
  active: { suffix: "active", kind: "list" },
  prioritized: { suffix: "prioritized", kind: "zset" },
  delayed: { suffix: "delayed", kind: "zset" },
  completed: { suffix: "completed", kind: "zset" },
  failed: { suffix: "failed", kind: "zset" },
  "waiting-children": { suffix: "waitingChildren", kind: "zset" },
};

/**
 * The structure of each type, in order. `perType` keeps one entry per distinct type name (as BullMQ's
 * counts do: `wait` and `waiting` are both counted); otherwise types naming the same structure are
 * listed once (as BullMQ's getJobs does).
 */
export function jobStructures(
  keys: QueueKeys,
  types: readonly string[],
  context: string,
  perType = false,
): { key: string; kind: "list" | "zset"; type: string }[] {
  const check: Checker = new Checker(context);
  const seen = new Set<string>();
  const out: { key: string; kind: "list" | "zset"; type: string }[] = [];
  for (const [i, type] of types.entries()) {
    const structure = structureOf[type];
    if (!structure) check.fail(`types[${i}]`, `one of ${Object.keys(structureOf).join(", ")}`, type);
    const identity = perType ? type : structure.suffix;
    if (seen.has(identity)) continue;
    seen.add(identity);
    out.push({ key: keys[structure.suffix], kind: structure.kind, type });
  }
  return out;
}

/** The types BullMQ 6's `getJobCounts()` and `getJobs()` use when given none (no `paused`). */
export const defaultJobTypes: JobType[] = [
  "active",
  "completed",
  "delayed",
  "failed",
  "prioritized",
  "waiting",
  "waiting-children",
];

/** What BullMQ's `count()` sums: the jobs still to be processed. */
export const pendingJobTypes: JobType[] = ["waiting", "delayed", "prioritized", "waiting-children"];
