/**
 * Prepares jobs for the addJobs script and turns its answer into ids, for Queue and FlowProducer
 * alike. A batch is split into calls of at most 1,000 jobs and ~8 MB (Upstash caps a request at
 * 10 MB); each call is atomic and carries its own replay guard.
 */
import { encodeOptions, parentField } from "./codec.ts";
import { errorForCode, UnexpectedReplyError } from "./errors.ts";
import { addJobs } from "./generated/scripts.ts";
import type { Job } from "./job.ts";
import { defaultMaxLenEvents, queueKeys, queueQualifiedName, replayGuardKey } from "./keys.ts";
import { type RedisPort, requestLimitBytes } from "./redis-port.ts";
import { runScript } from "./scripts.ts";
import type { JobsOptions } from "./types.ts";
import { Checker } from "./validate.ts";

export type Placement = "wait" | "lifo" | "prioritized" | "delayed" | "waiting-children";

/** A validated job, ready to be written. */
export interface NewJob {
  prefix: string;
  queueName: string;
  /** Custom id, or "" for the next counter value. */
  customId: string;
  /** The custom id was generated here (a flow node's UUID), so it cannot exist yet. */
  generatedId?: boolean;
  name: string;
  data: unknown;
  dataText: string;
  opts: JobsOptions;
  timestamp: number;
  placement: Placement;
  repeatJobKey?: string;
}

/** What one add resolved to. */
export interface AddOutcome {
  id: string;
  /** `created`, `duplicated` (the custom id existed) or `deduplicated` (id is the window's owner). */
  outcome: "created" | "duplicated" | "deduplicated";
}

/** A job `Queue.addBulkWithOutcomes` wrote or found, and what happened to it. */
export interface AddedJob<TData = unknown> {
  job: Job<TData>;
  outcome: AddOutcome["outcome"];
}

const outcomeNames = { 1: "created", 2: "duplicated", 3: "deduplicated" } as const;

export function placementOf(opts: JobsOptions, hasChildren: boolean): Placement {
  if (hasChildren) return "waiting-children";
  if ((opts.delay ?? 0) > 0) return "delayed";
  if ((opts.priority ?? 0) > 0) return "prioritized";
  return opts.lifo ? "lifo" : "wait";
}

const maxJobsPerCall = 1000;
// Data may triple in the request body (UTF-8, quotes escaped again); the rest of a job is small.
const maxBytesPerCall = Math.floor(requestLimitBytes * 0.8);

function chunks(jobs: NewJob[]): NewJob[][] {
  const out: NewJob[][] = [];
  let current: NewJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    const size = job.dataText.length * 3 + 1024;
    if (current.length > 0 && (current.length >= maxJobsPerCall || bytes + size > maxBytesPerCall)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(job);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Writes jobs (any number, any queues) and returns each job's resolved id, in input order. */
export interface WriteSettings {
  now: number;
  guardTtlMs: number;
  /** The events stream cap (MAXLEN ~), BullMQ's `streams.events.maxLen`. */
  maxLenEvents: number;
  /** The queue's events level: only "all" writes add events. */
  events: "all" | "final" | "none";
}

/** @internal How adds are written, from Queue or FlowProducer options. */
export function writeSettings(
  options: {
    replayGuardTtlMs?: number;
    streams?: { events?: { maxLen?: number } };
    events?: "all" | "final" | "none";
  },
  now: number,
): WriteSettings {
  const check = new Checker("Queue options");
  const maxLenEvents = options.streams?.events?.maxLen ?? defaultMaxLenEvents;
  check.integer("streams.events.maxLen", maxLenEvents, 1);
  const guardTtlMs = options.replayGuardTtlMs ?? 600_000;
  check.integer("replayGuardTtlMs", guardTtlMs, 10_000);
  const events = options.events ?? "all";
  if (events !== "all" && events !== "final" && events !== "none") {
    check.fail("events", "one of all, final, none", events);
  }
  return { now, guardTtlMs, maxLenEvents, events };
}

export async function writeJobs(
  port: RedisPort,
  jobs: NewJob[],
  settings: WriteSettings,
): Promise<AddOutcome[]> {
  const results: AddOutcome[] = [];
  for (const chunk of chunks(jobs)) results.push(...(await writeChunk(port, chunk, settings)));
  return results;
}

async function writeChunk(port: RedisPort, jobs: NewJob[], settings: WriteSettings): Promise<AddOutcome[]> {
  const queueIndex = new Map<string, number>();
  const queues: ReturnType<typeof queueKeys>[] = [];
  for (const job of jobs) {
    const qualified = queueQualifiedName(job.prefix, job.queueName);
    if (!queueIndex.has(qualified)) {
      queueIndex.set(qualified, queues.length + 1);
      queues.push(queueKeys(job.prefix, job.queueName));
    }
  }
  const first = jobs[0] as NewJob;
  const token = crypto.randomUUID();
  const reply = await runScript(
    port,
    addJobs,
    {
      replayGuard: replayGuardKey(first.prefix, first.queueName, token),
      queues,
    },
    {
      guardTtl: settings.guardTtlMs,
      maxLenEvents: settings.maxLenEvents,
      now: settings.now,
      events: settings.events === "all" ? 2 : settings.events === "final" ? 1 : 0,
      jobs: jobs.map((job) => {
        const parent = job.opts.parent;
        const dedup = job.opts.deduplication;
        const parentPrefix = parent ? `${parent.queue}:` : "";
        return {
          queue: queueIndex.get(queueQualifiedName(job.prefix, job.queueName)) as number,
          customId: job.customId,
          generatedId: job.generatedId ? "1" : "",
          name: job.name,
          data: job.dataText,
          opts: encodeOptions(job.opts),
          timestamp: job.timestamp,
          delay: job.opts.delay ?? 0,
          priority: job.opts.priority ?? 0,
          placement: job.placement,
          parentKey: parent ? parentPrefix + parent.id : "",
          parentField: parent ? parentField(parent.id, parent.queue, job.opts) : "",
          parentPrefix,
          dedupId: dedup?.id ?? "",
          dedupTtl: dedup?.ttl ?? 0,
          dedupExtend: dedup?.extend ? "1" : "",
          dedupReplace: dedup?.replace ? "1" : "",
          repeatJobKey: job.repeatJobKey ?? "",
        };
      }),
    },
  );
  return decodeReply(reply, jobs, queueIndex);
}

function subject(job: NewJob | undefined): string {
  if (!job) return "a job";
  return `job ${job.customId ? `"${job.customId}"` : "(new)"} "${job.name}" in queue "${job.queueName}"`;
}

function decodeReply(reply: unknown, jobs: NewJob[], queueIndex: Map<string, number>): AddOutcome[] {
  if (typeof reply === "string") return decodeReplay(reply, jobs, queueIndex);
  if (!Array.isArray(reply))
    throw new UnexpectedReplyError(`addJobs: unexpected reply of type ${typeof reply}`);
  const head = Number(reply[0]);
  if (head < 0) {
    const job = jobs[Number(reply[1]) - 1];
    throw errorForCode(head, "add", subject(job));
  }
  const out: AddOutcome[] = [];
  for (let i = 0; i < reply.length; i += 2) {
    const outcome = outcomeNames[Number(reply[i]) as 1 | 2 | 3];
    if (!outcome) throw new UnexpectedReplyError(`addJobs: unknown outcome ${String(reply[i])}`);
    out.push({ id: String(reply[i + 1]), outcome });
  }
  return out;
}

/** Rebuilds a replayed call's answer from its guard: counter values, then the deviating outcomes. */
function decodeReplay(text: string, jobs: NewJob[], queueIndex: Map<string, number>): AddOutcome[] {
  const bar = text.indexOf("|");
  const lasts = (bar < 0 ? text : text.slice(0, bar)).split(",").map(Number);
  const counts = new Map<number, number>();
  for (const job of jobs) {
    const g = queueIndex.get(queueQualifiedName(job.prefix, job.queueName)) as number;
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  const seen = new Map<number, number>();
  const out: AddOutcome[] = jobs.map((job) => {
    const g = queueIndex.get(queueQualifiedName(job.prefix, job.queueName)) as number;
    const seq = (seen.get(g) ?? 0) + 1;
    seen.set(g, seq);
    const auto = (lasts[g - 1] as number) - (counts.get(g) as number) + seq;
    return { id: job.customId || String(auto), outcome: "created" };
  });
  if (bar >= 0) {
    const bytes = new TextEncoder().encode(text.slice(bar + 1));
    const decoder = new TextDecoder();
    let at = 0;
    const readUntilColon = () => {
      const end = bytes.indexOf(58, at);
      const value = decoder.decode(bytes.subarray(at, end));
      at = end + 1;
      return Number(value);
    };
    while (at < bytes.length) {
      const index = readUntilColon();
      const outcome = outcomeNames[readUntilColon() as 1 | 2 | 3];
      const length = readUntilColon();
      const id = decoder.decode(bytes.subarray(at, at + length));
      at += length + 1;
      out[index - 1] = { id, outcome };
    }
  }
  return out;
}
