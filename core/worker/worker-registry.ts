/**
 * The registry of running worker invocations (`{P}nq:workers`), one home for both sides. The worker
 * side: each worker invocation registers itself in
 * `{P}nq:workers` (until a time, so one that dies lapses) and removes itself when done, and with its
 * registration records its batch size and concurrency in the queue's meta. The sweep reads both, so
 * its fan-out counts the invocations already running and divides the backlog by the batch size the
 * workers actually use, not by a second copy of it in the sweeper's configuration.
 */
import {
  countWorkers,
  decodeCountWorkers,
  decodeTrackWorker,
  trackWorker,
} from "../redis/generated/scripts.ts";
import { queueKeys, workerRegistryKey } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { flag, runScript } from "../redis/scripts.ts";
import type { EventsLevel } from "../types.ts";

/** What a worker registers for the sweeper's fan-out. */
export interface WorkerSettings {
  batchSize: number;
  concurrency: number;
  /** The worker's lease (ms): a handoff (lua/handOffJob.lua) leases for as long. */
  leaseMs?: number;
  /** The worker has a rate limiter: no job is handed over to its invocations. */
  limited?: boolean;
  /** The worker's events level, recorded as meta `nq:events`. */
  events?: EventsLevel;
  /** The worker's events stream cap, recorded as BullMQ's meta `opts.maxLenEvents`. */
  maxLenEvents?: number;
}

/**
 * Registers (expiresAt > 0) or removes (0) a running worker invocation of a queue; a registration
 * with `settings` records them for the sweeper. One script call.
 *
 * @example
 * await trackWorkerInvocation(port, "bull", "email", requestId, deadline, { batchSize: 50, concurrency: 10 });
 */
export async function trackWorkerInvocation(
  port: RedisPort,
  prefix: string,
  queue: string,
  invocation: string,
  expiresAt: number,
  settings?: WorkerSettings,
): Promise<void> {
  const reply = await runScript(
    port,
    trackWorker,
    { workers: workerRegistryKey(prefix, queue), meta: queueKeys(prefix, queue).meta },
    {
      invocation,
      expiresAt,
      batchSize: settings?.batchSize ?? 0,
      concurrency: settings?.concurrency ?? 0,
      leaseMs: settings?.leaseMs ?? 0,
      limited: flag(settings?.limited),
      events: settings?.events ?? "",
      maxLenEvents: settings?.maxLenEvents ?? 0,
    },
  );
  decodeTrackWorker(reply);
}

/**
 * How many worker invocations of a queue are running: registrations that have not lapsed. A kick reads
 * it to skip invoking a worker when the queue already has its maximum running. One script call (one
 * billed command).
 */
export async function countRunningWorkers(
  port: RedisPort,
  prefix: string,
  queue: string,
  now: number,
): Promise<number> {
  const reply = await runScript(port, countWorkers, { workers: workerRegistryKey(prefix, queue) }, { now });
  return decodeCountWorkers(reply).count;
}
