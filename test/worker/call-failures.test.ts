/**
 * When the worker's own calls go wrong: a lease whose answer is lost long enough for its locks to
 * lapse hands out nothing it no longer holds, and calls that keep failing end the drain only after
 * every attempt it started has stopped (its job.signal fired) or finished.
 */
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, createRedis, Queue, Worker } from "../../core/index.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("a worker's calls failing", () => {
  it("a lease answered only after its locks lapsed and another worker took the jobs runs none of them again", async () => {
    const prefix = uniquePrefix();
    await new Queue("q", { redis: stack.redis, prefix }).addBulk(
      [1, 2, 3].map((n) => ({ name: "j", data: { n } })),
    );
    const restB = await startRestServer({
      redis: { host: stack.redisServer.host, port: stack.redisServer.port },
      token: "b",
    });
    try {
      const runs: string[] = [];
      const processor = (by: string) => async (job: ActiveJob) => {
        runs.push(`${by}:${job.id}`);
        return by;
      };
      const a = new Worker("q", processor("A"), {
        redis: stack.redis,
        prefix,
        leaseMs: 1000,
        concurrency: 3,
      });
      const b = new Worker("q", processor("B"), {
        redis: createRedis({ url: restB.url, token: restB.token }),
        prefix,
        leaseMs: 1000,
        concurrency: 3,
        stalledInterval: 100,
      });
      a.on("error", () => {});
      await new Worker("warm", async () => 1, { redis: stack.redis, prefix }).drain();
      // A's first call runs, but its answer is lost to the client's first try and all five retries.
      stack.rest.setFault({ kind: "drop-after", command: "evalsha", times: 6 });
      const drainA = a.drain();
      await sleep(1300);
      await b.recoverStalled();
      await sleep(150);
      expect(await b.recoverStalled()).toHaveLength(3);
      expect((await b.drain()).completed).toBe(3);
      await drainA;
      expect(runs.filter((run) => run.startsWith("A"))).toEqual([]);
      expect(runs.sort()).toEqual(["B:1", "B:2", "B:3"]);
    } finally {
      stack.rest.setFault(null);
      await restB.close();
    }
  });

  it("calls failing for good: drain() rejects once every attempt it started has stopped or finished", async () => {
    const prefix = uniquePrefix();
    await new Queue("q", { redis: stack.redis, prefix }).addBulk(
      [1, 2, 3].map((n) => ({ name: "j", data: { n } })),
    );
    // No client retries, so the worker's own schedule decides when it gives up.
    const redis = new Redis({
      url: stack.rest.url,
      token: stack.rest.token,
      automaticDeserialization: false,
      retry: { retries: 0 },
    });
    const state = new Map<string, { aborted: boolean; finished: boolean }>();
    const worker = new Worker(
      "q",
      async (job: ActiveJob) => {
        const seen = { aborted: false, finished: false };
        state.set(job.id, seen);
        job.signal.addEventListener("abort", () => {
          seen.aborted = true;
        });
        await sleep((job.data as { n: number }).n === 1 ? 300 : 60_000);
        seen.finished = true;
      },
      // A short retry window: the 500s outlast it, so the failure is final for this drain.
      { redis, prefix, concurrency: 5, leaseMs: 30_000, retry: { windowMs: 500 } },
    );
    worker.on("error", () => {});
    const drain = worker.drain();
    await sleep(200);
    stack.rest.setFault({ kind: "status-500", command: "evalsha" });
    try {
      await expect(drain).rejects.toThrow();
      expect(state.size).toBe(3);
      for (const [, seen] of state) expect(seen.aborted || seen.finished).toBe(true);
      expect(state.get("2")?.aborted).toBe(true);
    } finally {
      stack.rest.setFault(null);
    }
  });
});
