/**
 * When the worker's own calls go wrong: a lease whose answer is lost or held back until its locks
 * lapse starts nothing it no longer holds (the extension before the first start finds them taken),
 * and calls that keep failing end the drain only after every attempt it started has stopped (its
 * job.signal fired) or finished.
 */
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, createRedis, Queue, Worker } from "../../core/index.ts";
import { type Fault, startRestServer } from "../../infra/rest-server/server.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("a worker's calls failing", () => {
  const lateAnswers: [string, Fault, number][] = [
    // The call runs, but its answer is lost to the client's first try and all five retries; the
    // worker's retry is answered by the replay guard with only the jobs its token still holds: none.
    ["lost five times over", { kind: "drop-after", command: "evalsha", times: 6 }, 0],
    // The call runs at once, but its answer comes 1.6 s later, after the 1 s lease: the extension
    // before the first start finds every lease taken, and drops the three jobs unstarted.
    ["held back 1.6 s", { kind: "delay-answer", delayMs: 1600, command: "evalsha", times: 1 }, 3],
  ];
  for (const [label, fault, dropped] of lateAnswers) {
    it(`a lease answer ${label}, past the lease, while another worker takes the jobs: none starts on it`, async () => {
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
        const options = { prefix, leaseMs: 1000, concurrency: 3 };
        const a = new Worker("q", processor("A"), { redis: stack.redis, ...options });
        const b = new Worker("q", processor("B"), {
          redis: createRedis({ url: restB.url, token: restB.token }),
          ...options,
          stalledInterval: 100,
        });
        const errors: string[] = [];
        a.on("error", (error) => errors.push(error.name));
        await new Worker("warm", async () => 1, { redis: stack.redis, prefix }).drain();
        stack.rest.setFault(fault);
        const drainA = a.drain();
        await sleep(1300);
        await b.recoverStalled();
        await sleep(150);
        expect(await b.recoverStalled()).toHaveLength(3);
        expect((await b.drain()).completed).toBe(3);
        const summaryA = await drainA;
        expect(runs.filter((run) => run.startsWith("A"))).toEqual([]);
        expect(runs.sort()).toEqual(["B:1", "B:2", "B:3"]);
        expect(summaryA.lostLeases).toBe(dropped);
        expect(errors.filter((name) => name === "LeaseLostError")).toHaveLength(dropped);
      } finally {
        stack.rest.setFault(null);
        await restB.close();
      }
    });
  }

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
