/**
 * The worker's script calls: one ackAndLease (or ackPromoteAndLease) per pipeline cycle, acking the
 * finished jobs and leasing more in the same request; extendLeases for every job held; and BullMQ's
 * stalled check. Each carries what it needs to be replay-safe.
 */

import { UnexpectedReplyError } from "../errors.ts";
import type { AckEntry } from "../job/ack-entry.ts";
import { ActiveJob } from "../job/active-job.ts";
import {
  type AckAndLeaseReply,
  ackAndLease,
  ackAndLeaseOutcomes,
  ackPromoteAndLease,
  decodeAckAndLease,
  decodeAckPromoteAndLease,
  decodeExtendLeases,
  decodeRecoverStalled,
  extendLeases,
  extendLeasesOutcomes,
  recoverStalled as recoverStalledScript,
} from "../redis/generated/scripts.ts";
import {
  attentionKey,
  defaultReplayGuardTtlMs,
  jobSubKeys,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
  workerRegistryKey,
} from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import { tracedCall } from "../telemetry/telemetry.ts";
import type { EventsLevel } from "../types.ts";
import { declaredKeys } from "./declared-keys.ts";
import { compactEntry, encodeIds } from "./entry-wire.ts";

const guardTtlMs = defaultReplayGuardTtlMs;

const levelCode: Record<EventsLevel, number> = { all: 2, final: 1, none: 0 };

export type LeaseStatus = "leased" | "paused" | "rate-limited" | "maxed";
const statuses: Record<number, LeaseStatus> = {
  [ackAndLeaseOutcomes.leased]: "leased",
  [ackAndLeaseOutcomes.paused]: "paused",
  [ackAndLeaseOutcomes.rateLimited]: "rate-limited",
  [ackAndLeaseOutcomes.maxed]: "maxed",
};

/** An acked entry's code: done (anything else is a refusal, CODES). */
export const ackDone = ackAndLeaseOutcomes.done;

export interface CycleRequest {
  /** This call's token: the lock value of the jobs it leases, and its replay guard's name. */
  token: string;
  /** Jobs to lease (0: ack only). */
  count: number;
  leaseMs: number;
  /** Ready ids to peek for the next call. */
  peek: number;
  /** Ids the previous call peeked: the only jobs a declared-keys call may lease. */
  candidates: string[];
  /** ackPromoteAndLease: promote due delayed jobs, prune, lease from anywhere (no declared keys). */
  open: boolean;
  /** Finished sets to prune (open calls): "target|count|age|limit;…". */
  prunes: string;
  limiterMax: number;
  limiterDuration: number;
  groupConcurrency: number;
  groupLimitMax: number;
  groupLimitDuration: number;
  workerName: string;
  maxLenEvents: number;
  events: EventsLevel;
  entries: AckEntry[];
  /** The invocation's registry id, when this may be the drain's last call (lua/includes/cycleJobs.lua). */
  unregister?: string;
}

export interface CycleResult {
  status: LeaseStatus;
  /** rate-limited: the limiter's TTL (ms). */
  info: number;
  /** Jobs were ready after the call. */
  readyLeft: boolean;
  /** The earliest delayed job's due time (ms), 0 for none; at or before the call's clock: promote. */
  nextDue: number;
  /**
   * One code per entry: 1 done, -2 lock gone, -6 another owner, -3 not active; for a completion, -4
   * children still pending or -9 a child failed (the job is left active and locked).
   */
  codes: number[];
  peeked: string[];
  jobs: ActiveJob[];
  /** The call took the invocation out of the registry (`unregister`: nothing ready, leased or delayed). */
  unregistered: boolean;
}

export async function cycle(context: QueueContext, request: CycleRequest): Promise<CycleResult> {
  const { port, prefix, queueName, clock } = context;
  const keys = queueKeys(prefix, queueName);
  const queuePrefix = queueKeyPrefix(prefix, queueName);
  const now = clock();
  const fixedKeys = {
    ...keys,
    replayGuard: replayGuardKey(prefix, queueName, request.token),
    attention: attentionKey(prefix),
    workers: workerRegistryKey(prefix, queueName),
  };
  const args = {
    prefix: queuePrefix,
    leaseToken: request.token,
    now,
    leaseMs: request.leaseMs,
    count: request.count,
    peek: request.peek,
    candidates: request.open ? "" : encodeIds(request.candidates),
    limiterMax: request.limiterMax,
    limiterDuration: request.limiterDuration,
    groupConcurrency: request.groupConcurrency,
    groupLimitMax: request.groupLimitMax,
    groupLimitDuration: request.groupLimitDuration,
    workerName: request.workerName,
    guardTtl: guardTtlMs,
    maxLenEvents: request.maxLenEvents,
    events: levelCode[request.events],
    prunes: request.open ? request.prunes : "",
    unregister: request.unregister ?? "",
    jobs: request.entries.map(compactEntry),
  };
  // Both scripts are the include cycleJobs: their replies have one shape.
  const reply: AckAndLeaseReply = request.open
    ? decodeAckPromoteAndLease(await runScript(port, ackPromoteAndLease, fixedKeys, args))
    : decodeAckAndLease(
        await runScript(
          port,
          ackAndLease,
          { ...fixedKeys, declared: declaredKeys(queuePrefix, request.entries, request.candidates) },
          args,
        ),
      );
  return parseCycleReply(context, reply, request, now);
}

function parseCycleReply(
  context: QueueContext,
  reply: AckAndLeaseReply,
  request: CycleRequest,
  now: number,
): CycleResult {
  const where = `worker call on queue "${context.queueName}"`;
  const status = statuses[reply.status];
  if (!status) throw new UnexpectedReplyError(`${where}: unknown status ${reply.status}`);
  const { codes } = reply;
  const jobs: ActiveJob[] = [];
  for (const { jobId: id, fields } of reply.jobs) {
    if (fields.length === 0) continue;
    const job = ActiveJob.fromLease(context, id, fields, request.token);
    // The script wrote these after reading the hash.
    job.processedOn = now;
    job.attemptsStarted += 1;
    if (request.workerName) job.processedBy = request.workerName;
    jobs.push(job);
  }
  if (codes.length !== request.entries.length)
    throw new UnexpectedReplyError(`${where}: ${codes.length} codes for ${request.entries.length} jobs`);
  return {
    status,
    info: reply.info,
    readyLeft: reply.readyLeft === 1,
    nextDue: reply.nextDue,
    codes,
    peeked: reply.peeked,
    jobs,
    // The script's own rule (lua/includes/cycleJobs.lua): nothing peeked, leased or delayed.
    unregistered:
      !!request.unregister && reply.peeked.length === 0 && reply.jobs.length === 0 && reply.nextDue === 0,
  };
}

/**
 * One worker call, traced when the worker has telemetry. Transient failures were already retried by
 * the port with the same token (core/redis/retry.ts): the replay guard then answers with the first
 * run's result, so nothing is done twice.
 */
export async function tracedCycle(context: QueueContext, request: CycleRequest): Promise<CycleResult> {
  const { telemetry } = context;
  const run = () => cycle(context, request);
  return telemetry ? tracedCall(telemetry, context.queueName, request.entries, run) : run();
}

/** What an extension found: the ids whose lease is lost, and the cancelled ones with their reasons. */
export interface Extended {
  lost: Set<string>;
  cancelled: Map<string, string>;
}

/** Extends the given leases; answers the lost ones and those a cancel (queue.cancelJob) reached. */
export async function extendBatch(
  context: QueueContext,
  jobs: { id: string; token: string; key: string }[],
  leaseMs: number,
): Promise<Extended> {
  const extended: Extended = { lost: new Set(), cancelled: new Map() };
  if (jobs.length === 0) return extended;
  const { port, prefix, queueName } = context;
  const { codes, reasons } = decodeExtendLeases(
    await runScript(
      port,
      extendLeases,
      {
        stalled: queueKeys(prefix, queueName).stalled,
        locks: jobs.map((job) => ({ lock: jobSubKeys(job.key).lock })),
      },
      { leaseMs, jobs: jobs.map((job) => ({ id: job.id, token: job.token })) },
    ),
  );
  let cancels = 0;
  for (const [i, job] of jobs.entries()) {
    if (codes[i] === extendLeasesOutcomes.cancelled) extended.cancelled.set(job.id, reasons[cancels++] ?? "");
    else if (codes[i] !== extendLeasesOutcomes.extended) extended.lost.add(job.id);
  }
  return extended;
}

export interface StalledCheck {
  stalledInterval: number;
  maxStalledCount: number;
}

/** Runs BullMQ's stalled check; returns the requeued ids, or undefined when it ran too recently. */
export async function runStalledCheck(
  context: QueueContext,
  check: StalledCheck,
): Promise<string[] | undefined> {
  const { port, prefix, queueName, clock } = context;
  const keys = queueKeys(prefix, queueName);
  const reply = decodeRecoverStalled(
    await runScript(
      port,
      recoverStalledScript,
      { ...keys, schedulers: keys.repeat, attention: attentionKey(prefix) },
      {
        prefix: queueKeyPrefix(prefix, queueName),
        now: clock(),
        stalledInterval: check.stalledInterval,
        maxStalledCount: check.maxStalledCount,
      },
    ),
  );
  return reply.form === "skipped" ? undefined : reply.ids;
}
