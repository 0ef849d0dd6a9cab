/**
 * The sweeper over a shard map: one sweeper loop per database (core/sweeper/sweeper.ts), each over
 * the configured queues that live there, with its own lock, attention index and event cursors on
 * that database — so an idle tick costs one read per database. They run side by side within the one
 * invocation; its result adds theirs up. A plain client gives the one loop, as before.
 */

import { isShardMap } from "../redis/shard-map.ts";
import { checkSweeperSettings } from "./settings-check.ts";
import {
  createDatabaseSweeper,
  type Sweeper,
  type SweeperPorts,
  type SweeperResult,
  type SweeperSettings,
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
    if (!isShardMap(redis)) return [createDatabaseSweeper(settings, { ...ports, connect: () => redis })];
    return [...redis.byDatabase(settings.queues).entries()].map(([database, queues]) =>
      createDatabaseSweeper({ ...settings, queues }, { ...ports, connect: () => redis.database(database) }),
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
