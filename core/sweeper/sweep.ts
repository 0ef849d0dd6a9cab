/**
 * The sweeper's core: one script call sweeps every configured queue (promotes due delayed jobs, runs
 * BullMQ's stalled check where jobs are active, reads backlogs and new events, finds job schedulers
 * whose due iteration is missing) and says when the next thing is due; a second call, only when some
 * iteration is missing, makes it again. Deciding how many workers to start and how long to sleep are
 * pure functions.
 */
import { UnexpectedReplyError } from "../errors.ts";
import { advanceEventCursors, releaseLock, sweepQueues, trackWorker } from "../redis/generated/scripts.ts";
import { queueKeys, sweeperKeys, workerRegistryKey } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
import { type MissingIteration, restoreIterations } from "../schedulers/scheduler-iterations.ts";

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
    },
  );
  if (!Array.isArray(reply)) throw new UnexpectedReplyError("sweep: unexpected reply");
  if (reply[0] === "locked") return { locked: true };
  const queues = reply.map((entry, index): QueueSweep => {
    const [numbers, stalled, events] = entry as [unknown[], unknown[], unknown[], unknown[]];
    const n = numbers.map(Number);
    const parsed: QueueEvent[] = [];
    for (let i = 0; i + 1 < events.length; i += 3) {
      const name = events[i + 2];
      parsed.push({
        id: String(events[i]),
        fields: pairs(events[i + 1] as unknown[]),
        ...(typeof name === "string" ? { jobName: name } : {}),
      });
    }
    return {
      queue: request.queues[index] as string,
      waiting: n[0] ?? 0,
      prioritized: n[1] ?? 0,
      active: n[2] ?? 0,
      paused: n[3] === 1,
      workers: n[4] ?? 0,
      nextDelayedAt: optionalTime(n[5]),
      nextStalledCheckAt: optionalTime(n[6]),
      nextSchedulerAt: optionalTime(n[7]),
      promoted: n[8] ?? 0,
      stalled: stalled.map(String),
      events: parsed,
      restored: [],
    };
  });
  for (const [index, queue] of queues.entries()) {
    const missing = (reply[index] as unknown[][])[3] ?? [];
    if (missing.length === 0) continue;
    const found: MissingIteration[] = [];
    for (let i = 0; i + 2 < missing.length; i += 3) {
      const hash = (missing[i + 2] as unknown[]).map(String);
      found.push({ schedulerId: String(missing[i]), millis: String(missing[i + 1]), hash });
    }
    queue.restored = await restoreIterations(port, prefix, queue.queue, found, request.now);
    queue.waiting += queue.restored.length;
  }
  return { locked: false, queues };
}

/** Moves the forwarding cursors after a successful forward; false when the lock was lost. */
export async function advanceCursors(
  port: RedisPort,
  prefix: string,
  token: string,
  lastIds: { queue: string; lastId: string }[],
): Promise<boolean> {
  if (lastIds.length === 0) return true;
  const keys = sweeperKeys(prefix);
  const reply = await runScript(
    port,
    advanceEventCursors,
    { lock: keys.lock, cursors: keys.cursors },
    {
      token,
      streams: lastIds.map(({ queue, lastId }) => ({ events: queueKeys(prefix, queue).events, lastId })),
    },
  );
  return Number(reply) === 1;
}

export async function releaseSweeperLock(port: RedisPort, prefix: string, token: string): Promise<void> {
  await runScript(port, releaseLock, { lock: sweeperKeys(prefix).lock }, { token });
}

/** Registers (expiresAt > 0) or removes (0) a running worker invocation of a queue. */
export async function trackWorkerInvocation(
  port: RedisPort,
  prefix: string,
  queue: string,
  invocation: string,
  expiresAt: number,
): Promise<void> {
  await runScript(
    port,
    trackWorker,
    { workers: workerRegistryKey(prefix, queue) },
    { invocation, expiresAt },
  );
}

/** How many worker invocations to start: enough for the backlog, minus those running, capped. */
export function workersToStart(
  sweep: QueueSweep,
  batchSize: number,
  maxWorkers: number,
  recentlyStarted = 0,
): number {
  if (sweep.paused) return 0;
  const backlog = sweep.waiting + sweep.prioritized;
  if (backlog === 0) return 0;
  const running = sweep.workers + recentlyStarted;
  const wanted = Math.ceil(backlog / Math.max(batchSize, 1)) - running;
  return Math.max(0, Math.min(wanted, maxWorkers - running));
}

/** The earliest time any queue needs the sweeper again, if any. */
export function nextDueAt(sweeps: readonly QueueSweep[]): number | undefined {
  let next: number | undefined;
  for (const s of sweeps) {
    for (const t of [s.nextDelayedAt, s.nextStalledCheckAt, s.nextSchedulerAt]) {
      if (t !== undefined && (next === undefined || t < next)) next = t;
    }
  }
  return next;
}

/**
 * How long the sweeper should sleep before its next pass, or undefined to stop: it stops when nothing
 * is due before it must end (shortly before the next tick, which will sweep anyway). Passes are at
 * least `minGapMs` apart after the previous one (`lastPassAt`), so jobs due a few ms apart are
 * promoted together rather than one pass each (each pass has a fixed cost).
 */
export function sleepBeforeNextPass(
  due: number | undefined,
  now: number,
  endAt: number,
  lastPassAt = now,
  minGapMs = 0,
): number | undefined {
  if (due === undefined || due >= endAt) return undefined;
  return Math.max(0, due - now, lastPassAt + minGapMs - now);
}
