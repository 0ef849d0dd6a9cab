/**
 * The sweeper over several databases or prefixes: one sweeper loop (core/sweeper/sweeper.ts) per
 * database of a shard map and per key prefix, each over the configured queues there, with its own
 * lock, attention index and event cursors — so an idle tick costs one read per database and prefix.
 * On Redis Cluster a hash-tagged prefix is one slot, so this is one loop per slot group: a sweep's
 * keys must share a slot. They run side by side within the one invocation; its result adds theirs
 * up. One client and one prefix give the one loop, as before.
 */

import { isShardMap } from "../redis/shard-map.ts";
import { checkSweeperSettings } from "./settings-check.ts";
import {
  createDatabaseSweeper,
  type Sweeper,
  type SweeperPorts,
  type SweeperResult,
  type SweeperSettings,
  type SweptQueue,
} from "./sweeper.ts";

/**
 * @example
 * const sweeper = createSweeper({ queues: ["email", "report"] }, { connect: () => shards, startWorkers });
 */
export function createSweeper(settings: SweeperSettings, ports: SweeperPorts): Sweeper {
  checkSweeperSettings(settings, ports);
  let sweepers: Sweeper[] | undefined;
  const build = (): Sweeper[] => {
    const redis = ports.connect();
    const groups = new Map<string, { database: string; prefix: string | undefined; queues: SweptQueue[] }>();
    for (const entry of settings.queues) {
      const queue = typeof entry === "string" ? { name: entry } : entry;
      const database = isShardMap(redis) ? redis.databaseOf(queue.name) : "";
      const prefix = queue.prefix ?? settings.prefix;
      const key = `${database}\u0000${prefix ?? ""}`;
      const group = groups.get(key) ?? { database, prefix, queues: [] };
      group.queues.push(queue);
      groups.set(key, group);
    }
    return [...groups.values()].map(({ database, prefix, queues }) =>
      createDatabaseSweeper(
        { ...settings, queues, ...(prefix !== undefined ? { prefix } : {}) },
        { ...ports, connect: () => (isShardMap(redis) ? redis.database(database) : redis) },
      ),
    );
  };
  return {
    async run(invocation) {
      sweepers ??= build();
      if (sweepers.length === 1) return (sweepers[0] as Sweeper).run(invocation);
      const outcomes = await Promise.allSettled(sweepers.map((sweeper) => sweeper.run(invocation)));
      const failed = outcomes.find((outcome) => outcome.status === "rejected");
      if (failed) throw failed.reason;
      return combined(outcomes.map((outcome) => (outcome as PromiseFulfilledResult<SweeperResult>).value));
    },
  };
}

/** The databases' results as one: counts added up, locked only if every database was. */
function combined(results: SweeperResult[]): SweeperResult {
  const result: SweeperResult = {
    locked: results.every((r) => r.locked),
    passes: 0,
    invoked: {},
    forwarded: 0,
    promoted: 0,
    stalled: 0,
    restored: 0,
  };
  for (const r of results) {
    result.passes += r.passes;
    result.forwarded += r.forwarded;
    result.promoted += r.promoted;
    result.stalled += r.stalled;
    result.restored += r.restored;
    Object.assign(result.invoked, r.invoked);
    if (r.nextDueAt !== undefined) result.nextDueAt = Math.min(result.nextDueAt ?? r.nextDueAt, r.nextDueAt);
  }
  return result;
}
