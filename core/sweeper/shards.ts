/**
 * The sweeper over several databases or prefixes: one sweeper loop (core/sweeper/sweeper.ts) per
 * database of a shard map and per key prefix, each over the configured queues there, with its own
 * lock, attention index and event cursors — so an idle tick costs one read per database and prefix.
 * On Redis Cluster a hash-tagged prefix is one slot, so this is one loop per slot group: a sweep's
 * keys must share a slot. They run side by side within the one invocation; its result adds theirs
 * up. One client and one prefix give the one loop, as before.
 */

import { defaultPrefix } from "../redis/keys.ts";
import { isShardMap } from "../redis/shard-map.ts";
import { checkSweeperSettings } from "./settings-check.ts";
import {
  createDatabaseSweeper,
  emptySweeperResult,
  type Sweeper,
  type SweeperPorts,
  type SweeperResult,
  type SweeperSettings,
  type SweepFailure,
  type SweptQueue,
} from "./sweeper.ts";

/** One loop and where it sweeps. */
interface Loop {
  where: { database?: string; prefix: string };
  sweeper: Sweeper;
}

/**
 * @example
 * const sweeper = createSweeper({ queues: ["email", "report"] }, { connect: () => shards, startWorkers });
 */
export function createSweeper(settings: SweeperSettings, ports: SweeperPorts): Sweeper {
  checkSweeperSettings(settings, ports);
  let loops: Loop[] | undefined;
  const build = (): Loop[] => {
    const redis = ports.connect();
    const groups = new Map<string, { database: string; prefix: string; queues: SweptQueue[] }>();
    for (const entry of settings.queues) {
      const queue = typeof entry === "string" ? { name: entry } : entry;
      const database = isShardMap(redis) ? redis.databaseOf(queue.name) : "";
      const prefix = queue.prefix ?? settings.prefix ?? defaultPrefix;
      const key = `${database}\u0000${prefix}`;
      const group = groups.get(key) ?? { database, prefix, queues: [] };
      group.queues.push(queue);
      groups.set(key, group);
    }
    return [...groups.values()].map(({ database, prefix, queues }) => ({
      where: { ...(database ? { database } : {}), prefix },
      sweeper: createDatabaseSweeper(
        { ...settings, queues, prefix },
        { ...ports, connect: () => (isShardMap(redis) ? redis.database(database) : redis) },
      ),
    }));
  };
  return {
    async run(invocation) {
      loops ??= build();
      if (loops.length === 1) return (loops[0] as Loop).sweeper.run(invocation);
      const outcomes = await Promise.allSettled(loops.map((loop) => loop.sweeper.run(invocation)));
      const results: SweeperResult[] = [];
      const failures: SweepFailure[] = [];
      const all = loops;
      outcomes.forEach((outcome, i) => {
        const { where } = all[i] as Loop;
        if (outcome.status === "fulfilled") results.push(outcome.value);
        else failures.push({ ...where, error: outcome.reason });
      });
      // Every loop failing is the invocation's failure; otherwise the others' work is reported, with
      // which database and prefix failed (their loops released their locks when they gave up).
      if (results.length === 0)
        throw new AggregateError(
          failures.map((f) => f.error),
          "every sweeper loop failed",
        );
      const result = combined(results);
      if (failures.length > 0) result.failures = failures;
      return result;
    },
  };
}

/** The loops' results as one: counts added up, locked only if every loop was. */
function combined(results: SweeperResult[]): SweeperResult {
  const result = { ...emptySweeperResult(), locked: results.every((r) => r.locked) };
  for (const r of results) {
    result.passes += r.passes;
    result.forwarded += r.forwarded;
    result.promoted += r.promoted;
    result.stalled += r.stalled;
    result.restored += r.restored;
    // One queue name may be swept under several prefixes: its invocations add up.
    for (const [queue, count] of Object.entries(r.invoked))
      result.invoked[queue] = (result.invoked[queue] ?? 0) + count;
    if (r.nextDueAt !== undefined) result.nextDueAt = Math.min(result.nextDueAt ?? r.nextDueAt, r.nextDueAt);
  }
  return result;
}
