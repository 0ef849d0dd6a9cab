/**
 * How many worker invocations of a queue are running: registrations in the worker registry
 * (`{P}nq:workers`, written by each invocation, pruned by the sweeper) that have not lapsed. A kick
 * reads it to skip invoking a worker when the queue already has its maximum running.
 */
import { countWorkers, decodeCountWorkers } from "../redis/generated/scripts.ts";
import { workerRegistryKey } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";

/** One script call (one billed command): the registrations of `queue` expiring after `now`. */
export async function countRunningWorkers(
  port: RedisPort,
  prefix: string,
  queue: string,
  now: number,
): Promise<number> {
  const reply = await runScript(port, countWorkers, { workers: workerRegistryKey(prefix, queue) }, { now });
  return decodeCountWorkers(reply).count;
}
