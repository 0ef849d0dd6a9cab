/**
 * The worker's three batch calls — lease, extend, ack — and the stalled check, each one script call
 * for a whole batch, each carrying a replay guard where a replay could otherwise do harm.
 */
import { ActiveJob } from "./active-job.ts";
import { decodeJob, hashFromFlat } from "./codec.ts";
import { UnexpectedReplyError } from "./errors.ts";
import {
  ackJobs,
  extendLeases,
  leaseJobs,
  recoverStalled as recoverStalledScript,
} from "./generated/scripts.ts";
import type { JobLocation } from "./job.ts";
import { defaultMaxLenEvents, queueKeyPrefix, queueKeys, replayGuardKey } from "./keys.ts";
import type { AckEntry } from "./outcome.ts";
import { runScript } from "./scripts.ts";

const guardTtlMs = 600_000;

export type LeaseStatus = "leased" | "paused" | "rate-limited" | "maxed";

export interface LeaseResult {
  status: LeaseStatus;
  jobs: ActiveJob[];
  /** rate-limited: the limiter's TTL (ms); leased with no job: when the earliest delayed job is due (ms), or 0. */
  info: number;
}

const statuses: LeaseStatus[] = ["leased", "paused", "rate-limited", "maxed"];

export interface LeaseRequest {
  token: string;
  count: number;
  leaseMs: number;
  limiterMax: number;
  limiterDuration: number;
  workerName: string;
}

export async function leaseBatch(location: JobLocation, request: LeaseRequest): Promise<LeaseResult> {
  const { port, prefix, queueName, clock } = location;
  const keys = queueKeys(prefix, queueName);
  const now = clock();
  const reply = await runScript(
    port,
    leaseJobs,
    { ...keys, replayGuard: replayGuardKey(prefix, queueName, request.token) },
    {
      prefix: queueKeyPrefix(prefix, queueName),
      token: request.token,
      now,
      leaseMs: request.leaseMs,
      count: request.count,
      limiterMax: request.limiterMax,
      limiterDuration: request.limiterDuration,
      workerName: request.workerName,
      guardTtl: guardTtlMs,
    },
  );
  if (!Array.isArray(reply))
    throw new UnexpectedReplyError(`lease on queue "${queueName}": unexpected reply`);
  const status = statuses[Number(reply[0])];
  if (!status)
    throw new UnexpectedReplyError(`lease on queue "${queueName}": unknown status ${String(reply[0])}`);
  const jobs: ActiveJob[] = [];
  for (let i = 2; i + 1 < reply.length; i += 2) {
    const id = String(reply[i]);
    const flat = (reply[i + 1] as unknown[]).map(String);
    if (flat.length === 0) continue;
    const hash = hashFromFlat(flat);
    const job = new ActiveJob(location, id, decodeJob(hash));
    job.token = request.token;
    job.storedData = hash.data;
    // The script wrote these after reading the hash.
    job.processedOn = now;
    job.attemptsStarted += 1;
    if (request.workerName) job.processedBy = request.workerName;
    jobs.push(job);
  }
  return { status, jobs, info: Number(reply[1]) };
}

/** Extends the given leases; returns the ids whose lease is lost. */
export async function extendBatch(
  location: JobLocation,
  jobs: ActiveJob[],
  leaseMs: number,
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const { port, prefix, queueName } = location;
  const keys = queueKeys(prefix, queueName);
  const reply = await runScript(
    port,
    extendLeases,
    { stalled: keys.stalled },
    {
      prefix: queueKeyPrefix(prefix, queueName),
      leaseMs,
      jobs: jobs.map((job) => ({ id: job.id, token: job.token })),
    },
  );
  if (!Array.isArray(reply))
    throw new UnexpectedReplyError(`extend on queue "${queueName}": unexpected reply`);
  return new Set(jobs.filter((_, i) => Number(reply[i]) !== 1).map((job) => job.id));
}

export interface AckResult {
  /**
   * One code per entry: 1 done, -2 lock gone, -6 another owner, -3 not active; for a completion, -4
   * children still pending or -9 a child failed (the job is left active and locked).
   */
  codes: number[];
  /** Whether wait or prioritized still held jobs after the ack (unknown after a replay: true). */
  readyLeft: boolean;
  /** When no job was ready: the earliest delayed job's due time (ms), or 0. */
  nextDue: number;
}

/** Acks a batch in one call. */
export async function ackBatch(
  location: JobLocation,
  entries: AckEntry[],
  batchToken: string,
  maxLenEvents = defaultMaxLenEvents,
): Promise<AckResult> {
  if (entries.length === 0) return { codes: [], readyLeft: true, nextDue: 0 };
  const { port, prefix, queueName, clock } = location;
  const keys = queueKeys(prefix, queueName);
  const reply = await runScript(
    port,
    ackJobs,
    { ...keys, replayGuard: replayGuardKey(prefix, queueName, `ack-${batchToken}`) },
    {
      prefix: queueKeyPrefix(prefix, queueName),
      now: clock(),
      guardTtl: guardTtlMs,
      maxLenEvents,
      jobs: entries,
    },
  );
  if (!Array.isArray(reply)) throw new UnexpectedReplyError(`ack on queue "${queueName}": unexpected reply`);
  if (reply[0] === "replayed") {
    const codes = entries.map(() => 1);
    for (const part of String(reply[1] ?? "").split(";")) {
      const [index, code] = part.split(":");
      if (index && code) codes[Number(index) - 1] = Number(code);
    }
    return { codes, readyLeft: true, nextDue: 0 };
  }
  return { readyLeft: Number(reply[0]) === 1, nextDue: Number(reply[1]), codes: reply.slice(2).map(Number) };
}

export interface StalledCheck {
  stalledInterval: number;
  maxStalledCount: number;
}

/** Runs BullMQ's stalled check; returns the requeued ids, or undefined when it ran too recently. */
export async function runStalledCheck(
  location: JobLocation,
  check: StalledCheck,
): Promise<string[] | undefined> {
  const { port, prefix, queueName, clock } = location;
  const keys = queueKeys(prefix, queueName);
  const reply = await runScript(
    port,
    recoverStalledScript,
    { ...keys, schedulers: keys.repeat },
    {
      prefix: queueKeyPrefix(prefix, queueName),
      now: clock(),
      stalledInterval: check.stalledInterval,
      maxStalledCount: check.maxStalledCount,
    },
  );
  if (!Array.isArray(reply))
    throw new UnexpectedReplyError(`recoverStalled on queue "${queueName}": unexpected reply`);
  if (reply[0] === "skipped") return undefined;
  return reply.map(String);
}
