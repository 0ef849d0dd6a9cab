/**
 * The sweeper loop in core (core/sweeper/sweeper.ts) behind its ports, without a Lambda context: fake
 * `startWorkers`/`publish` ports that record what they are asked, an injected clock and sleep, a real
 * redis-server behind the real `@upstash/redis` client and the REST server, which also counts billed
 * commands. And the worker side of the registry: a function worker (core/worker/function-worker.ts)
 * records its batch size and concurrency where the sweep reads them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFunctionWorker,
  createSweeper,
  type ForwardedEvent,
  Queue,
  type SweeperSettings,
  type SweptQueue,
  toRedisPort,
} from "../../core/index.ts";
import { trackWorkerInvocation } from "../../core/worker/worker-registry.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

/** A sweeper whose ports record their calls; it releases its lock so runs can follow each other. */
function recordingSweeper(settings: SweeperSettings, forward = false) {
  const started: { queue: string; count: number }[] = [];
  const published: ForwardedEvent[] = [];
  const failures: { error: unknown; passes: number }[] = [];
  const sweeper = createSweeper(
    { mode: "once", releaseLock: true, ...settings },
    {
      connect: () => stack.redis,
      startWorkers: async (queue: SweptQueue, count: number) => {
        started.push({ queue: queue.name, count });
      },
      ...(forward
        ? {
            publish: async (events: ForwardedEvent[]) => {
              published.push(...events);
              return { failed: [] };
            },
          }
        : {}),
      failed: (error, passes) => failures.push({ error, passes }),
    },
  );
  const run = () => sweeper.run({ token: crypto.randomUUID(), remainingMs: 60_000 });
  return { run, started, published, failures };
}

const jobs = (count: number) => Array.from({ length: count }, (_, n) => ({ name: "send", data: { n } }));

describe("event forwarding", () => {
  it("forwards the events of a queue's first pass: its cursor starts before the pass's own promotions", async () => {
    const prefix = uniquePrefix("loop");
    const now = Date.now();
    const job = await new Queue("mail", { redis: stack.redis, prefix, clock: () => now }).add(
      "later",
      {},
      { delay: 1000 },
    );
    const sweeper = recordingSweeper({ queues: ["mail"], prefix, clock: () => now + 5000 }, true);
    const result = await sweeper.run();
    expect(result.promoted).toBe(1);
    // The add's own events came before forwarding began and stay behind; the promotion's is sent.
    expect(sweeper.published.map(({ event }) => event.fields)).toEqual([
      { event: "waiting", jobId: job.id, prev: "delayed" },
    ]);
    expect(result.forwarded).toBe(1);
    expect((await sweeper.run()).forwarded).toBe(0);
  });
});

describe("the fan-out", () => {
  it("divides the backlog by the batch size the queue's workers registered, else the configured one", async () => {
    const prefix = uniquePrefix("loop");
    const worker = createFunctionWorker(
      {
        queue: "bulk",
        prefix,
        batchSize: 50,
        concurrency: 10,
        jobTimeoutMs: 500,
        safetyMarginMs: 100,
        processor: async () => "done",
      },
      {
        connect: () => ({ redis: stack.redis }),
        onRegisterError: (error) => {
          throw error;
        },
      },
    );
    // One invocation over the empty queue registers (with its settings) and unregisters.
    expect((await worker.run("invocation-1", 2000)).result.stoppedBecause).toBe("empty");
    expect(await stack.direct.zcard(`${prefix}:bulk:nq:workers`)).toBe(0);
    // Its settings, one place per queue fact: batch size and concurrency (the fan-out), lease and
    // limiter (the handoff), events level and the events stream's cap (BullMQ's field, the trim's).
    const meta = await stack.direct.hmget(
      `${prefix}:bulk:meta`,
      "nq:batchSize",
      "nq:concurrency",
      "nq:leaseMs",
      "nq:limited",
      "nq:events",
      "opts.maxLenEvents",
    );
    expect(meta).toEqual(["50", "10", "30000", "0", "all", "10000"]);

    await new Queue("bulk", { redis: stack.redis, prefix }).addBulk(jobs(100));
    await new Queue("plain", { redis: stack.redis, prefix }).addBulk(jobs(100));
    const swept = (name: string): SweptQueue => ({ name, workerFunction: `${name}-fn`, batchSize: 10 });
    const sweeper = recordingSweeper({ queues: [swept("bulk"), swept("plain")], prefix });
    const result = await sweeper.run();
    expect(sweeper.started).toEqual([
      { queue: "bulk", count: 2 },
      { queue: "plain", count: 10 },
    ]);
    expect(result.invoked).toEqual({ bulk: 2, plain: 10 });
  });

  it("reads the registered settings at no extra billed command, and registering costs no more than before", async () => {
    const prefix = uniquePrefix("loop");
    const port = toRedisPort(stack.redis);
    await trackWorkerInvocation(port, prefix, "warm", "w", Date.now() + 60_000, {
      batchSize: 5,
      concurrency: 5,
    });
    await trackWorkerInvocation(port, prefix, "warm", "w", 0);
    stack.rest.resetStats();
    await trackWorkerInvocation(port, prefix, "a", "inv", Date.now() + 60_000, {
      batchSize: 50,
      concurrency: 10,
    });
    await trackWorkerInvocation(port, prefix, "a", "inv", 0);
    // Two script calls: ZADD and HSET, then ZREM (was ZADD, ZCARD and ZREM, ZCARD: 6).
    expect(stack.rest.stats().billed).toBe(5);

    await new Queue("a", { redis: stack.redis, prefix }).add("send", {});
    await new Queue("b", { redis: stack.redis, prefix }).add("send", {});
    const billed = async (queue: string) => {
      const sweeper = recordingSweeper({ queues: [queue], prefix, metricsEveryPasses: 0 });
      await sweeper.run(); // loads the scripts
      stack.rest.resetStats();
      await sweeper.run();
      return stack.rest.stats().billed;
    };
    expect(await billed("a")).toBe(await billed("b"));
  });
});

describe("the loop", () => {
  it("sleeps through its sleep port until a delayed job is due, promotes it and starts a worker for it", async () => {
    const prefix = uniquePrefix("loop");
    let now = Date.now();
    const sleeps: number[] = [];
    await new Queue("mail", { redis: stack.redis, prefix, clock: () => now }).add(
      "later",
      {},
      { delay: 700 },
    );
    const sweeper = recordingSweeper({
      queues: [{ name: "mail", workerFunction: "mail-fn" }],
      prefix,
      mode: "loop",
      tickMs: 3000,
      marginMs: 500,
      clock: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
      },
    });
    const result = await sweeper.run();
    expect(result).toMatchObject({ passes: 2, promoted: 1, invoked: { mail: 1 } });
    expect(sleeps).toEqual([700]);
    expect(sweeper.started).toEqual([{ queue: "mail", count: 1 }]);
  });

  it("reports a failing pass with the passes done, rethrows, and still releases its lock", async () => {
    const prefix = uniquePrefix("loop");
    const failures: number[] = [];
    const sweeper = createSweeper(
      { queues: ["mail"], prefix, mode: "once", releaseLock: true },
      {
        connect: () => stack.redis,
        startWorkers: async () => undefined,
        publish: async () => {
          throw new Error("bus unavailable");
        },
        failed: (_error, passes) => failures.push(passes),
      },
    );
    await new Queue("mail", { redis: stack.redis, prefix }).add("send", {});
    await sweeper.run({ token: "first", remainingMs: 60_000 }); // sets the cursor before the add below
    await new Queue("mail", { redis: stack.redis, prefix }).add("send", {});
    await expect(sweeper.run({ token: "second", remainingMs: 60_000 })).rejects.toThrow("bus unavailable");
    expect(failures).toEqual([1]);
    expect(await stack.direct.exists(`${prefix}:nq:sweeper:lock`)).toBe(0);
  });
});
