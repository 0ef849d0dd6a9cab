/**
 * A sweeper in loop mode on the real clock, its ports recording (workers started, events published):
 * `tick()` runs one invocation of 3 s. Ticks follow each other at once here, so each releases the
 * lock, as local runs do; stalled checks every 500 ms.
 */
import type { Redis } from "@upstash/redis";
import {
  createSweeper,
  type ForwardedEvent,
  type SweeperSettings,
  type SweptQueue,
} from "../../core/index.ts";

export const loopTickMs = 3000;

export function loopSweeper(
  redis: Redis,
  prefix: string,
  queues: SweptQueue[],
  extra: Partial<SweeperSettings> = {},
) {
  const started: string[] = [];
  const published: ForwardedEvent[] = [];
  const sweeper = createSweeper(
    {
      queues,
      prefix,
      tickMs: loopTickMs,
      marginMs: 300,
      minPassGapMs: 50,
      stalledInterval: 500,
      releaseLock: true,
      ...extra,
    },
    {
      connect: () => redis,
      startWorkers: async (queue, count) => {
        for (let n = 0; n < count; n++) started.push(queue.name);
      },
      publish: async (events) => {
        published.push(...events);
        return { failed: [] };
      },
    },
  );
  const tick = () => sweeper.run({ token: crypto.randomUUID(), remainingMs: loopTickMs });
  return { tick, started, published };
}
