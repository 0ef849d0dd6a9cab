/**
 * Writes adds for Queue and FlowProducer alike, all or nothing. A batch that fits one call (1,000
 * small jobs, fewer as their data grows: a script may hold Redis 20 ms, and Upstash caps a request at
 * 10 MB; core/adds/add-calls.ts) is one atomic addJobs call; a larger one is staged in chunks and made
 * visible by one commit (core/adds/staged-add.ts). Either way the add is safe to replay.
 */

import { UnexpectedReplyError } from "../errors.ts";
import type { Job } from "../job/job.ts";
import { addJobs, addJobsOutcomes, decodeAddJobs } from "../redis/generated/scripts.ts";
import {
  attentionKey,
  defaultMaxLenEvents,
  defaultReplayGuardTtlMs,
  queueKeys,
  replayGuardKey,
} from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
import type { JobsOptions } from "../types.ts";
import { Checker } from "../validate.ts";
import { addError, chunks, eventsLevel, jobArgs, type QueueTable, queueTable } from "./add-calls.ts";
import type { AddOutcome, NewJob, Placement, WriteSettings } from "./add-types.ts";
import { writeStaged } from "./staged-add.ts";

/** A job `Queue.addBulkWithOutcomes` wrote or found, and what happened to it. */
export interface AddedJob<TData = unknown> {
  job: Job<TData>;
  outcome: AddOutcome["outcome"];
  /** How Queue's `handoff` took the add (AddOutcome.handoff): the worker it needs was started. */
  handoff?: "handed" | "waiting";
}

/** The add scripts' outcome codes. */
export const outcomeNames = {
  [addJobsOutcomes.created]: "created",
  [addJobsOutcomes.duplicated]: "duplicated",
  [addJobsOutcomes.deduplicated]: "deduplicated",
} as const;

export function placementOf(opts: JobsOptions, hasChildren: boolean): Placement {
  if (hasChildren) return "waiting-children";
  if ((opts.delay ?? 0) > 0) return "delayed";
  if ((opts.priority ?? 0) > 0) return "prioritized";
  return opts.lifo ? "lifo" : "wait";
}

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
  const guardTtlMs = options.replayGuardTtlMs ?? defaultReplayGuardTtlMs;
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
  if (jobs.length === 0) return [];
  if (chunks(jobs).length > 1) return await writeStaged(port, jobs, settings);
  return await writeOneCall(port, jobs, settings);
}

async function writeOneCall(port: RedisPort, jobs: NewJob[], settings: WriteSettings): Promise<AddOutcome[]> {
  const table = queueTable(jobs);
  const first = jobs[0] as NewJob;
  const token = crypto.randomUUID();
  const reply = await runScript(
    port,
    addJobs,
    {
      replayGuard: replayGuardKey(first.prefix, first.queueName, token),
      attention: attentionKey(first.prefix),
      queues: table.queues.map((q) => queueKeys(q.prefix, q.queueName)),
    },
    {
      guardTtl: settings.guardTtlMs,
      maxLenEvents: settings.maxLenEvents,
      now: settings.now,
      events: eventsLevel(settings.events),
      jobs: jobs.map((job) => jobArgs(job, table.indexOf(job))),
    },
  );
  return decodeReply(reply, jobs, table);
}

function decodeReply(reply: unknown, jobs: NewJob[], table: QueueTable): AddOutcome[] {
  const answer = decodeAddJobs(reply);
  if (answer.form === "replayed") return decodeReplay(answer.text, jobs, table);
  if (answer.form === "refused") throw addError(answer.code, jobs[answer.index - 1]);
  return answer.jobs.map(({ outcome, jobId }) => {
    const name = outcomeNames[outcome as 1 | 2 | 3];
    if (!name) throw new UnexpectedReplyError(`addJobs: unknown outcome ${outcome}`);
    return { id: jobId, outcome: name };
  });
}

/** Rebuilds a replayed call's answer from its guard: counter values, then the deviating outcomes. */
function decodeReplay(text: string, jobs: NewJob[], table: QueueTable): AddOutcome[] {
  const bar = text.indexOf("|");
  const lasts = (bar < 0 ? text : text.slice(0, bar)).split(",").map(Number);
  const counts = new Map<number, number>();
  for (const job of jobs) {
    const g = table.indexOf(job);
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  const seen = new Map<number, number>();
  const out: AddOutcome[] = jobs.map((job) => {
    const g = table.indexOf(job);
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
