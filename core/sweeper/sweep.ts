import {
  advanceEventCursors,
  decodeAdvanceEventCursors,
  decodeReleaseLock,
  decodeSweepQueues,
  releaseLock,
  sweepQueues,
} from "../redis/generated/scripts.ts";
import { attentionKey, queueKeys, sweeperKeys, workerRegistryKey } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
import { type MissingIteration, restoreIterations } from "../schedulers/scheduler-iterations.ts";
import { encodeIds } from "../worker/entry-wire.ts";
import type { WorkerSettings } from "../worker/worker-registry.ts";

export interface SweepRequest {
  port: RedisPort;
  prefix: string;
  queues: readonly string[];
  /** This sweeper invocation's lock token. */
  token: string;
  lockTtlMs: number;
  now: number;
  stalledInterval: number;
  maxStalledCount: number;
  promoteLimit: number;
  /** Most events read per queue for forwarding; 0 reads none. */
  eventBatch: number;
  /** How soon (ms) a queue left with jobs waiting is looked at again (the sweeper's tick). */
  recheckMs: number;
  /**
   * How far back (ms, default 10 minutes) a job scheduler's due iteration is checked for: one found
   * missing is made again. Older ones are left alone, so a schedule that ended costs nothing for long.
   */
  schedulerLookbackMs?: number;
}

/** A queue event as forwarded: its stream id, fields, and the job's name when it still exists. */
export interface QueueEvent {
  id: string;
  fields: Record<string, string>;
  jobName?: string;
}

export interface QueueSweep {
  queue: string;
  waiting: number;
  prioritized: number;
  active: number;
  paused: boolean;
  /** Worker invocations registered as running. */
  workers: number;
  /**
   * The batch size and concurrency the queue's workers last registered (trackWorkerInvocation); none
   * when no worker has registered yet, or when nothing waits or runs (then the sweep does not read them).
   */
  workerSettings?: WorkerSettings;
  nextDelayedAt?: number;
  nextStalledCheckAt?: number;
  /** The next run of a job scheduler still to come. */
  nextSchedulerAt?: number;
  promoted: number;
  /** Scheduler iterations that had gone missing and were made again (counted in `waiting`). */
  restored: string[];
  stalled: string[];
  events: QueueEvent[];
}

export type SweepResult = { locked: true } | { locked: false; queues: QueueSweep[] };

function pairs(flat: unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = String(flat[i + 1]);
  return out;
}

const optionalTime = (value: unknown): number | undefined => (Number(value) > 0 ? Number(value) : undefined);

export async function sweep(request: SweepRequest): Promise<SweepResult> {
  const { port, prefix } = request;
  const keys = sweeperKeys(prefix);
  const reply = await runScript(
    port,
    sweepQueues,
    {
      lock: keys.lock,
      cursors: keys.cursors,
      attention: attentionKey(prefix),
      queues: request.queues.map((name) => {
        const q = queueKeys(prefix, name);
        return { ...q, schedulers: q.repeat, workers: workerRegistryKey(prefix, name) };
      }),
    },
    {
      token: request.token,
      lockTtl: request.lockTtlMs,
      now: request.now,
      stalledInterval: request.stalledInterval,
      maxStalledCount: request.maxStalledCount,
      promoteLimit: request.promoteLimit,
      eventBatch: request.eventBatch,
      schedulerLookback: request.schedulerLookbackMs ?? 600_000,
      recheck: request.recheckMs,
      names: request.queues.map((name) => ({ name })),
    },
  );
  const decoded = decodeSweepQueues(reply);
  if (decoded.form === "locked") return { locked: true };
  const queues = decoded.queues.map(
    ({ counts: n, stalled, events }, index): QueueSweep => ({
      queue: request.queues[index] as string,
      waiting: n.waiting,
      prioritized: n.prioritized,
      active: n.active,
      paused: n.paused === 1,
      workers: n.workers,
      nextDelayedAt: optionalTime(n.nextDelayedAt),
      nextStalledCheckAt: optionalTime(n.nextStalledCheckAt),
      nextSchedulerAt: optionalTime(n.nextSchedulerAt),
      promoted: n.promoted,
      ...(n.batchSize > 0 ? { workerSettings: { batchSize: n.batchSize, concurrency: n.concurrency } } : {}),
      stalled,
      events: events.map((event) => ({
        id: event.eventId,
        fields: pairs(event.fields),
        ...(event.jobName !== null ? { jobName: event.jobName } : {}),
      })),
      restored: [],
    }),
  );
  for (const [index, queue] of queues.entries()) {
    const missing: MissingIteration[] = (decoded.queues[index]?.missing ?? []).map((m) => ({
      schedulerId: m.schedulerId,
      millis: m.millis,
      hash: m.fields,
    }));
    if (missing.length === 0) continue;
    queue.restored = await restoreIterations(port, prefix, queue.queue, missing, request.now);
    queue.waiting += queue.restored.length;
  }
  return { locked: false, queues };
}

/**
 * Moves the forwarding cursors after a forward, and notes the queues in `again` (their forward partly
 * failed) for the next pass; false when the lock was lost.
 */
export async function advanceCursors(
  port: RedisPort,
  prefix: string,
  token: string,
  lastIds: { queue: string; lastId: string }[],
  again: readonly string[] = [],
): Promise<boolean> {
  if (lastIds.length === 0 && again.length === 0) return true;
  const keys = sweeperKeys(prefix);
  const reply = await runScript(
    port,
    advanceEventCursors,
    { lock: keys.lock, cursors: keys.cursors, attention: attentionKey(prefix) },
    {
      token,
      again: encodeIds(again),
      streams: lastIds.map(({ queue, lastId }) => ({ events: queueKeys(prefix, queue).events, lastId })),
    },
  );
  return decodeAdvanceEventCursors(reply).recorded === 1;
}

export async function releaseSweeperLock(port: RedisPort, prefix: string, token: string): Promise<void> {
  decodeReleaseLock(await runScript(port, releaseLock, { lock: sweeperKeys(prefix).lock }, { token }));
}
