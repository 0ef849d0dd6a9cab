/**
 * The lone-job handoff (Queue's `handoff` option): a single add with a worker function to start leases
 * its job to the invocation it is about to start, in the add's own call (lua/handOffJob.lua), and the
 * start request carries the job (core/job/handed-over.ts) — so the invocation runs it on arrival and
 * its first call is the ack, instead of registering and leasing first. When a worker may not take it
 * now (paused, rate-limited, global concurrency, `maxWorkers` running, jobs waiting ahead) the job is
 * added to wait as any add, and a worker is started while fewer than `maxWorkers` run.
 */
import { type HandedOverJob, handoffBytes, maxHandoffBytes } from "../job/handed-over.ts";
import { encodeOptions } from "../redis/codec.ts";
import {
  decodeHandOffJob,
  decodeHandOffJobDeclared,
  decodeReleaseHandoff,
  handOffJob,
  handOffJobDeclared,
  handOffJobDeclaredCodes,
  handOffJobDeclaredOutcomes,
  handOffJobOutcomes,
  releaseHandoff,
} from "../redis/generated/scripts.ts";
import {
  attentionKey,
  jobKey,
  jobSubKeys,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
  workerRegistryKey,
} from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { flag, runScript } from "../redis/scripts.ts";
import { Checker } from "../validate.ts";
import { addError, eventsLevel } from "./add-calls.ts";
import type { AddOutcome, NewJob, WriteSettings } from "./add-types.ts";

/** What starts a queue's worker invocations (e.g. nimbusq/functions' worker kick: a Lambda Invoke). */
export interface HandoffTarget {
  /** Most worker invocations of the queue running at once (the sweeper's `maxWorkers`). */
  maxWorkers: number;
  /** A handed-over job's lease when no worker has registered its own (ms, default 30 000). */
  leaseMs?: number;
  /** Starts one invocation; `handoff` is the job leased to it. Awaited. */
  start(request: HandoffRequest): Promise<void>;
  /**
   * Where a failed start goes; without it the add rejects with the error. Either way the job is added:
   * a job handed over to the invocation that could not start goes back to wait first (releaseHandoff).
   */
  onStartError?: (error: unknown) => void;
}

/** The start request: a worker invocation's event. */
export interface HandoffRequest {
  queue: string;
  reason: "handoff" | "kick";
  handoff?: HandedOverJob;
}

/** What a handoff add did. */
interface HandoffResult {
  outcome: AddOutcome;
  /** The job leased to the invocation to start, when it was handed over. */
  handed?: HandedOverJob;
  /** Worker invocations running before the add. */
  running: number;
}

const defaultHandoffLeaseMs = 30_000;

/** The hash a handed-over job gets (name, value, …), as the invocation receives it. */
function handedFields(job: NewJob, now: number): string[] {
  const fields = ["name", job.name, "data", job.dataText, "opts", encodeOptions(job.opts)];
  fields.push("timestamp", String(job.timestamp), "delay", "0", "priority", "0");
  fields.push("processedOn", String(now), "ats", "1");
  return fields;
}

// Room for the id, the token, the invocation id and the numbers of a HandedOverJob.
const handoffOverheadBytes = 512;

/**
 * The hash a job would be handed over with (name, value, …), or undefined when it cannot be: only a
 * job ready now (no delay, priority, parent, deduplication, group or scheduler) small enough for an
 * asynchronous invocation's payload with its hash as JSON. A custom id that exists makes the add a
 * duplicate, as any add.
 */
export function handoffFields(job: NewJob, now: number): string[] | undefined {
  const { opts } = job;
  if (job.generatedId || job.repeatJobKey || (job.placement !== "wait" && job.placement !== "lifo"))
    return undefined;
  if (opts.parent || opts.deduplication || opts.group) return undefined;
  if (job.dataText.length > maxHandoffBytes) return undefined;
  const fields = handedFields(job, now);
  const probe = { id: "", token: "", invocation: "", lockedAt: now, leaseMs: 0, fields };
  return handoffBytes(probe) + handoffOverheadBytes <= maxHandoffBytes ? fields : undefined;
}

/** The fixed keys both handoff scripts take; the queue's keys they do not declare are left out by runScript. */
function handoffKeys(job: NewJob, invocation: string) {
  return {
    ...queueKeys(job.prefix, job.queueName),
    replayGuard: replayGuardKey(job.prefix, job.queueName, invocation),
    attention: attentionKey(job.prefix),
    workers: workerRegistryKey(job.prefix, job.queueName),
  };
}

/** A job's hash and lock keys. */
function jobKeys(job: NewJob, id: string) {
  const key = jobKey(job.prefix, job.queueName, id);
  return { job: key, lock: jobSubKeys(key).lock };
}

/** Ids a process reserved ahead, per Redis client and queue (`{P}id` block, next to last). */
export type IdBlocks = Map<string, { next: number; last: number; epoch: string }>;

const blocksByClient = new WeakMap<object, IdBlocks>();

/** The reserved-id blocks of one Redis client (a warm container keeps its block between requests). */
export function idBlocksFor(client: object): IdBlocks {
  let blocks = blocksByClient.get(client);
  if (!blocks) {
    blocks = new Map();
    blocksByClient.set(client, blocks);
  }
  return blocks;
}

/** Ids reserved per block: a lone add with none left reserves this many in its own call. */
export const idBlockSize = 50;

/** The next reserved id of the queue and its block's epoch, or undefined when the block is used up. */
function takeReserved(blocks: IdBlocks, queue: string): { id: string; epoch: string } | undefined {
  const block = blocks.get(queue);
  if (!block || block.next > block.last) return undefined;
  block.next += 1;
  return { id: String(block.next - 1), epoch: block.epoch };
}

/**
 * Adds a job with its `handoffFields`, handing it over when a worker may take it now: one script call.
 * With an id known beforehand (custom, or reserved by an earlier call) it runs under Upstash's key
 * locks (handOffJobDeclared); otherwise handOffJob reserves a block of ids, takes the first, and the
 * rest serve this process's next lone adds.
 */
async function writeHandoff(
  port: RedisPort,
  job: NewJob,
  fields: string[],
  settings: WriteSettings,
  target: HandoffTarget,
  blocks: IdBlocks,
): Promise<HandoffResult> {
  const invocation = crypto.randomUUID();
  const token = `nq-${invocation}:0`;
  const queue = queueKeyPrefix(job.prefix, job.queueName);
  const fixedKeys = handoffKeys(job, invocation);
  const args = {
    guardTtl: settings.guardTtlMs,
    maxLenEvents: settings.maxLenEvents,
    now: settings.now,
    events: eventsLevel(settings.events),
    name: job.name,
    data: job.dataText,
    opts: fields[5] as string,
    timestamp: job.timestamp,
    lifo: flag(job.placement === "lifo"),
    token,
    invocation,
    maxWorkers: target.maxWorkers,
    leaseMs: target.leaseMs ?? defaultHandoffLeaseMs,
  };
  const reserve = () =>
    runScript(port, handOffJob, fixedKeys, { ...args, reserve: idBlockSize }).then(decodeHandOffJob);
  const reserved = job.customId ? undefined : takeReserved(blocks, queue);
  const known = job.customId || reserved?.id;
  let reply = known
    ? decodeHandOffJobDeclared(
        await runScript(
          port,
          handOffJobDeclared,
          { ...fixedKeys, ...jobKeys(job, known) },
          { ...args, id: known, custom: job.customId ? "1" : "", idEpoch: reserved?.epoch ?? "" },
        ),
      )
    : await reserve();
  // The block predates an obliterate of the queue (its id counter restarted): reserve a new one.
  if (reply.outcome === handOffJobDeclaredCodes.staleIds) {
    blocks.delete(queue);
    reply = await reserve();
  }
  if (reply.reservedLast > 0)
    blocks.set(queue, { next: Number(reply.id) + 1, last: reply.reservedLast, epoch: reply.idEpoch });
  if (reply.outcome < 0) throw addError(reply.outcome, job);
  const duplicated = reply.outcome === handOffJobDeclaredOutcomes.duplicated;
  const outcome: AddOutcome = { id: reply.id, outcome: duplicated ? "duplicated" : "created" };
  if (reply.handed !== handOffJobOutcomes.handed) return { outcome, running: reply.running };
  const handed = { id: reply.id, token, invocation, lockedAt: settings.now, leaseMs: reply.leaseMs, fields };
  return { outcome, handed, running: reply.running };
}

/**
 * Writes the job with `writeHandoff`, then starts its invocation: with the job when it was handed
 * over, without it when it waits and fewer than `maxWorkers` run. The add's outcomes, as writeJobs'.
 */
export async function addHandingOver(
  port: RedisPort,
  job: NewJob,
  fields: string[],
  settings: WriteSettings,
  target: HandoffTarget,
  blocks: IdBlocks,
): Promise<AddOutcome[]> {
  const result = await writeHandoff(port, job, fields, settings, target, blocks);
  if (result.outcome.outcome === "duplicated") return [result.outcome];
  const { handed } = result;
  let started = true;
  try {
    if (handed) await target.start({ queue: job.queueName, reason: "handoff", handoff: handed });
    else if (result.running < target.maxWorkers) await target.start({ queue: job.queueName, reason: "kick" });
  } catch (error) {
    started = false;
    // Best effort: if even this fails, the lease lapses and the stalled check recovers the job.
    if (handed) await releaseHandedOver(port, job, handed, settings).catch(() => undefined);
    if (!target.onStartError) throw error;
    target.onStartError(error);
  }
  return [{ ...result.outcome, handoff: handed && started ? "handed" : "waiting" }];
}

/** Puts a handed-over job whose invocation could not be started back in wait (lua/releaseHandoff.lua). */
async function releaseHandedOver(
  port: RedisPort,
  job: NewJob,
  handed: HandedOverJob,
  settings: WriteSettings,
): Promise<void> {
  const reply = await runScript(
    port,
    releaseHandoff,
    { ...handoffKeys(job, handed.invocation), ...jobKeys(job, handed.id) },
    {
      jobId: handed.id,
      token: handed.token,
      invocation: handed.invocation,
      now: settings.now,
      events: eventsLevel(settings.events),
    },
  );
  decodeReleaseHandoff(reply);
}

/** The options as given, once their `handoff` is absent or a target. */
export function checkHandoff<T extends { handoff?: unknown }>(options: T, context: string): T {
  const given = options?.handoff as Record<string, unknown> | undefined;
  if (given === undefined) return options;
  const check = new Checker(context);
  check.object("handoff", given, ["maxWorkers", "leaseMs", "start", "onStartError"]);
  check.integer("handoff.maxWorkers", given.maxWorkers, 1);
  if (given.leaseMs !== undefined) check.integer("handoff.leaseMs", given.leaseMs, 1000);
  if (typeof given.start !== "function")
    check.fail("handoff.start", "a function (request) => Promise<void>", given.start);
  if (given.onStartError !== undefined && typeof given.onStartError !== "function")
    check.fail("handoff.onStartError", "a function (error) => void", given.onStartError);
  return options;
}
