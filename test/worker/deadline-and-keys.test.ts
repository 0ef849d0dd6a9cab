/**
 * Two promises of the pipeline checked directly: nothing starts that could not finish before the
 * deadline (leased jobs that never started go back to the front of the line, in order), and the
 * worker's declared-keys script really is held to Upstash's rule (an undeclared key is refused).
 */
import { describe, expect, it } from "vitest";
import { Queue, toRedisPort, Worker } from "../../core/index.ts";
import { ackAndLease } from "../../core/redis/generated/scripts.ts";
import {
  attentionKey,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
  workerRegistryKey,
} from "../../core/redis/keys.ts";
import { runScript } from "../../core/redis/scripts.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";
import { leaseBatch } from "../support/worker-calls.ts";

const direct = directConnectionForFile();

describe("the deadline", () => {
  it("starts no job that could not finish in time and hands the prefetched ones back in order", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    const queue = new Queue("q", { redis, prefix });
    await queue.addBulk(Array.from({ length: 6 }, (_, n) => ({ name: "n", data: { n } })));
    const starts: { id: string; at: number }[] = [];
    const worker = new Worker(
      "q",
      async (job) => {
        starts.push({ id: job.id, at: Date.now() });
        await new Promise((r) => setTimeout(r, 300));
      },
      { redis, prefix, concurrency: 1, batchSize: 6 },
    );
    const deadline = Date.now() + 1000;
    const summary = await worker.drain({ deadline, reserveMs: 300 });
    expect(summary.stoppedBecause).toBe("deadline");
    for (const { at } of starts) expect(at + 300).toBeLessThanOrEqual(deadline);
    expect(summary.completed).toBe(starts.length);
    expect(summary.handedBack).toBe(6 - starts.length);
    expect(starts.length).toBeGreaterThan(0);
    // Back at the front (the right of wait), the first leased foremost.
    const wait = await direct.lrange(`${prefix}:q:wait`, 0, -1);
    const expected = ["1", "2", "3", "4", "5", "6"].slice(starts.length);
    expect([...wait].reverse()).toEqual(expected);
    expect(await direct.llen(`${prefix}:q:active`)).toBe(0);
  });
});

describe("declared keys", () => {
  it("the ack + lease script is refused when a key it touches is not declared", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    await new Queue("q", { redis, prefix }).add("n", {});
    const port = toRedisPort(redis);
    const context = { port, prefix, queueName: "q", clock: Date.now };
    const lease = await leaseBatch(context, {
      token: "t:1",
      count: 1,
      leaseMs: 30_000,
      limiterMax: 0,
      limiterDuration: 0,
      groupConcurrency: 0,
      groupLimitMax: 0,
      groupLimitDuration: 0,
      workerName: "",
    });
    expect(lease.jobs).toHaveLength(1);
    const keys = queueKeys(prefix, "q");
    const call = (declared: { key: string }[]) =>
      runScript(
        port,
        ackAndLease,
        {
          ...keys,
          replayGuard: replayGuardKey(prefix, "q", `t:${declared.length}`),
          attention: attentionKey(prefix),
          workers: workerRegistryKey(prefix, "q"),
          declared,
        },
        {
          prefix: queueKeyPrefix(prefix, "q"),
          leaseToken: "t:2",
          now: Date.now(),
          leaseMs: 30_000,
          count: 0,
          peek: 1,
          candidates: "",
          limiterMax: 0,
          limiterDuration: 0,
          groupConcurrency: 0,
          groupLimitMax: 0,
          groupLimitDuration: 0,
          workerName: "",
          guardTtl: 60_000,
          maxLenEvents: 10_000,
          events: 2,
          prunes: "",
          unregister: "",
          jobs: [{ id: "1", token: "t:1", outcome: "completed", value: "null", attemptsMade: 1, extra: "" }],
        },
      );
    // The job's lock is built from its id inside the script: left out of KEYS, Upstash refuses it.
    await expect(call([])).rejects.toThrow(/Dynamic keys are not allowed.*Key was: .*:q:1/);
    expect(await direct.llen(`${prefix}:q:active`)).toBe(1);
    const job = `${prefix}:q:1`;
    const declared = [job, `${job}:lock`, `${job}:dependencies`, `${job}:unsuccessful`].map((key) => ({
      key,
    }));
    const reply = (await call(declared)) as unknown[];
    expect(reply.slice(4, 6)).toEqual([1, 1]);
    expect(await direct.zscore(`${prefix}:q:completed`, "1")).not.toBeNull();
  });
});
