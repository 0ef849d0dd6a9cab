/**
 * Chaos with the faults TCP has (issue 27), over the TCP port alone (createRedis with a redis:// URL,
 * no REST server): 2,400 jobs across three worker processes and the sweeper's loop, all connected
 * through a loopback proxy that cuts every open connection six times during the run — two resets
 * (TCP RST), two with half a reply through, two with half a command through — while redis-server is
 * killed and restarted twice (AOF, fsync always). Side effects are counted by the processes.
 * (A failover, a replica taking over a killed master, is test/tcp/tcp-scale.test.ts's.)
 *
 * Must hold: nothing lost, every job in exactly one state, no job failed — in particular none whose
 * processor had succeeded — no side effect twice (no process is frozen and every fault is far shorter
 * than a lease: a second run would need a lease its worker was told it lost, and none is), and no
 * failed call taken as final: every one the fleet saw was retried as transient.
 */
import { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, createSweeper, Queue } from "../../core/index.ts";
import {
  fillChaosQueue,
  fleetOutcome,
  killFleet,
  newFleet,
  runSchedule,
  startWorker,
  stopWorker,
  waitFinished,
} from "../support/chaos-fleet.ts";
import { type CutCounts, type CuttingProxy, startCuttingProxy } from "../support/cutting-proxy.ts";
import { type RestartableRedis, startRestartableRedis } from "../support/restartable-redis.ts";
import { uniquePrefix } from "../support/stack.ts";

const jobCount = 2400;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let redis: RestartableRedis;
let proxy: CuttingProxy;
beforeAll(async () => {
  redis = await startRestartableRedis();
  proxy = await startCuttingProxy({ host: redis.host, port: redis.port });
});
afterAll(async () => {
  await proxy?.close();
  await redis?.stop();
});

describe("a fleet over TCP under dropped connections and Redis restarts", () => {
  it("2,400 jobs, every connection cut six times, Redis restarted twice: none lost, none failed, none twice", async () => {
    const prefix = uniquePrefix("tcpchaos");
    const queueKey = `${prefix}:chaos`;
    // Jobs go in straight to Redis, before any fault; everything after goes through the proxy.
    const direct = createRedis({ url: `redis://${redis.host}:${redis.port}` });
    const queue = new Queue("chaos", { redis: direct, prefix });
    await fillChaosQueue(queue, jobCount, 600, 40);
    await direct.close();
    const fleet = newFleet();
    await Promise.all(
      ["A", "B", "C"].map((name) => startWorker(fleet, name, { NQ_URL: proxy.url, NQ_PREFIX: prefix })),
    );

    const client = createRedis({ url: proxy.url });
    const sweeping = new AbortController();
    const sweeper = createSweeper(
      { queues: ["chaos"], prefix, tickMs: 2000, marginMs: 200, stalledInterval: 1000, releaseLock: true },
      { connect: () => client, startWorkers: async () => {} },
    );
    let sweepPasses = 0;
    const sweepFailures: string[] = [];
    const sweeps = (async () => {
      while (!sweeping.signal.aborted) {
        await sweeper
          .run({ token: crypto.randomUUID(), remainingMs: 2000 })
          .then(() => void sweepPasses++)
          .catch((error: Error) => void sweepFailures.push(error.message));
        // A pass with nothing to do returns at once: a short pause leaves the CPU to the fleet.
        await sleep(50);
      }
    })();

    const cuts: (CutCounts & { at: number })[] = [];
    const cut = (mid?: "reply" | "command") => async () => {
      const at = Date.now();
      cuts.push({ at, ...(await proxy.cut(mid ? { mid } : {})) });
    };
    const schedule: [number, () => Promise<void>][] = [
      [700, cut()],
      [1500, cut("reply")],
      [2300, () => redis.kill()],
      [3100, () => redis.start()],
      [3800, cut("command")],
      [4600, cut()],
      [5300, () => redis.kill()],
      [6000, () => redis.start()],
      [6700, cut("reply")],
      [7400, cut("command")],
    ];
    const began = await runSchedule(schedule);
    const raw = new IORedis({ host: redis.host, port: redis.port, lazyConnect: true });
    await raw.connect();
    try {
      await waitFinished(raw, queueKey, jobCount, 40_000);
      const drainedAt = Date.now() - began;
      const closed = await Promise.all([...fleet.children.values()].map((child) => stopWorker(child)));
      sweeping.abort();
      await sweeps;
      await client.close();

      const outcome = await fleetOutcome(raw, queueKey, fleet, jobCount);
      const { completed, failed, twice } = outcome;
      // A second run is explained only by a lost lease its first runner was told of.
      const leaseLost = (id: string) =>
        fleet.errors.some(({ text }) => text.startsWith("LeaseLostError") && text.includes(`job "${id}"`));
      const unexplained = twice.filter((id) => !leaseLost(id));
      const dropped = cuts.reduce((sum, c) => sum + c.plain + c.midReply + c.midCommand, 0);
      // What the fleet's failed calls were taken for: "transient, network" and the like.
      const kinds = new Map<string, number>();
      for (const { text } of fleet.errors) {
        const kind = /\((transient|final), [a-z-]+/.exec(text)?.[0].slice(1) ?? text.split(":", 1).join("");
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      console.log(
        `tcp chaos: ${completed.size} completed, ${failed.length} failed in ${drainedAt} ms; ` +
          `${cuts.length} cuts dropping ${dropped} connections (` +
          cuts
            .map(
              (c) => `@${c.at - began}: ${c.plain} plain/${c.midReply} mid-reply/${c.midCommand} mid-command`,
            )
            .join(", ") +
          `), 2 Redis restarts; ${twice.length} side effects twice (${unexplained.length} unexplained); ` +
          `worker error events ${JSON.stringify(Object.fromEntries(kinds))}; ` +
          `sweeper ${sweepPasses} passes, ${sweepFailures.length} failed ${JSON.stringify(sweepFailures)}`,
      );
      expect(outcome.lost, "lost").toEqual([]);
      expect(outcome.misplaced, "in two states").toEqual([]);
      expect(closed, "workers that closed when asked").toEqual([true, true, true]);
      expect(outcome.failedAfterEffect, "failed after their processor succeeded").toEqual([]);
      expect(failed, "failed").toEqual([]);
      expect(outcome.neverRan, "never ran").toEqual([]);
      const detail = unexplained.map((id) => ({
        id,
        starts: (fleet.starts.get(id) ?? []).map(({ by, at }) => `${by}@${at - began}`),
        errors: fleet.errors
          .filter(({ text }) => text.includes(`"${id}"`))
          .map(({ by, text }) => `${by}: ${text}`),
      }));
      expect(detail, "run twice without a lost lease").toEqual([]);
      expect(twice, "run twice").toEqual([]);
      expect(
        fleet.errors.filter(({ text }) => /^RedisCallError.*\(final, /.test(text)).map(({ text }) => text),
        "calls the fleet took as failed for good",
      ).toEqual([]);
      // The faults did hit: every cut found connections to drop, the fleet saw failed calls.
      expect(cuts.every((c) => c.plain + c.midReply + c.midCommand > 0)).toBe(true);
      expect(fleet.errors.length).toBeGreaterThan(0);
    } finally {
      raw.disconnect();
      killFleet(fleet);
    }
  }, 90_000);
});
