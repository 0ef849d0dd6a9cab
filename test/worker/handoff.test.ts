/**
 * The lone-job handoff (issue 24, point 2): an add with a worker to start leases its job to the
 * invocation it starts (lua/handOffJob.lua) and the invocation runs it on arrival, its first call the
 * ack. Real REST server and redis-server (billing counted as Upstash bills), the real worker handler
 * invoked in-process as the local stack invokes it, the real sweeper loop, real BullMQ reading.
 */
import { Queue as BullQueue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedis,
  type HandoffRequest,
  type JobsOptions,
  Queue,
  type SweptQueue,
  toRedisPort,
} from "../../core/index.ts";
import type { Invoke } from "../../functions/aws/lambda-invoker.ts";
import { cappedWorkerKick } from "../../functions/config/workers-env.ts";
import { createHttpApp } from "../../functions/http/index.ts";
import { type WorkerEvent, workerHandler } from "../../functions/worker.ts";
import { lambdaContext } from "../support/aws-events.ts";
import { loopSweeper } from "../support/loop-sweeper.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { leaseBatch } from "../support/worker-calls.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

type Events = "all" | "final";

/** The HTTP API with a kick that runs the queue's worker handler in-process, as the local stack does. */
function deployment(prefix: string, events: Events = "all", processor = async () => "sent") {
  const runs: Promise<unknown>[] = [];
  const starts: number[] = [];
  const handler = workerHandler({
    queue: "mail",
    processor: async () => {
      starts.push(Date.now());
      return await processor();
    },
    redis: stack.redis,
    prefix,
    events,
    output: () => {},
  });
  const invoke: Invoke = async (fn, payload) => {
    runs.push(handler(payload as WorkerEvent, lambdaContext({ functionName: fn, remainingMs: 60_000 })));
  };
  const kick = cappedWorkerKick([{ name: "mail", workerFunction: "mail-worker" }], invoke, () => ({
    redis: stack.redis,
    prefix,
  }));
  const app = createHttpApp({ redis: stack.redis, prefix, tokens: ["t"], kick, events });
  const post = async () => {
    const response = await app.request("/queues/mail/jobs", {
      method: "POST",
      headers: { authorization: "Bearer t", "content-type": "application/json" },
      body: JSON.stringify({ name: "send", data: { to: "a@example.com" } }),
    });
    return { status: response.status, body: (await response.json()) as { id: string; state: string } };
  };
  const settled = async () => {
    await Promise.all(runs.splice(0));
  };
  return { post, settled, starts };
}

/** A Queue whose handoff records the start requests instead of invoking anything. */
function recordingQueue(prefix: string, leaseMs = 1000, maxWorkers = 10) {
  const requests: HandoffRequest[] = [];
  const queue = new Queue("mail", {
    redis: stack.redis,
    prefix,
    handoff: { maxWorkers, leaseMs, start: async (request) => void requests.push(request) },
  });
  return { queue, requests };
}

/** The queue's worker handler, counting the jobs its processor ran. */
function countingWorker(prefix: string) {
  let runs = 0;
  const handler = workerHandler({
    queue: "mail",
    processor: async () => ++runs,
    redis: stack.redis,
    prefix,
    output: () => {},
  });
  return { handler, runs: () => runs };
}

/** An invocation with room for a job (the default jobTimeoutMs 30 s plus its margin). */
const longContext = () => lambdaContext({ remainingMs: 60_000 });

const loop = (prefix: string, queues: SweptQueue[]) => loopSweeper(stack.redis, prefix, queues);

describe("a lone job handed over to the invocation its add starts", () => {
  for (const [events, billed] of [
    ["all", 33],
    ["final", 28],
  ] as const) {
    it(`costs ${billed} billed commands and 2 requests over the HTTP API with events ${events} (was 48 / 43 and 5; 34 / 29 before the guard held the reply)`, async () => {
      const prefix = uniquePrefix("ho");
      const api = deployment(prefix, events);
      // Loads the scripts: the first add reserves a block of ids (handOffJob), the next ones use it
      // (handOffJobDeclared, under key locks).
      for (let i = 0; i < 2; i++) {
        await api.post();
        await api.settled();
      }
      stack.rest.resetStats();
      const { status, body } = await api.post();
      await api.settled();
      expect({ status, state: body.state }).toEqual({ status: 202, state: "active" });
      // handOffJob (the add, lease and registration), then the invocation's ack, which also takes it
      // out of the registry (nothing else ready).
      expect({ billed: stack.rest.stats().billed, requests: stack.rest.stats().requests }).toEqual({
        billed,
        requests: 2,
      });
      // Both calls run under Upstash's key locks and were refused nothing: the add takes an id reserved
      // by an earlier add, so it declares the job's keys; the ack declares every key it touches.
      expect(stack.rest.stats()).toMatchObject({ keyLockingCalls: 2, keyViolations: 0, globalLockCalls: 0 });
      const job = await new Queue("mail", { redis: stack.redis, prefix }).getJob(body.id);
      expect(await job?.getState()).toBe("completed");
      expect({
        returnvalue: job?.returnvalue,
        attemptsStarted: job?.attemptsStarted,
        made: job?.attemptsMade,
      }).toEqual({ returnvalue: "sent", attemptsStarted: 1, made: 1 });
      expect(await stack.direct.zcard(`${prefix}:mail:nq:workers`)).toBe(0);
    });
  }

  it("writes BullMQ's events in order, and the job reaches the processor without another call", async () => {
    const prefix = uniquePrefix("ho");
    const api = deployment(prefix);
    const { body } = await api.post();
    await api.settled();
    const entries = await stack.direct.xrange(`${prefix}:mail:events`, "-", "+");
    const mine = entries.map(([, f]) => f.slice(0, 4).join(" "));
    expect(mine).toEqual([
      `event added jobId ${body.id}`,
      `event waiting jobId ${body.id}`,
      `event active jobId ${body.id}`,
      `event completed jobId ${body.id}`,
      "event drained",
    ]);
    expect(api.starts).toHaveLength(1);
  });

  it("reads as a normal active job with a lock to BullMQ while its invocation runs", async () => {
    const prefix = uniquePrefix("ho");
    const { queue, requests } = recordingQueue(prefix, 30_000);
    const [added] = await queue.addBulkWithOutcomes([{ name: "send", data: { n: 1 } }]);
    expect(added?.handoff).toBe("handed");
    const handoff = requests[0]?.handoff;
    expect(requests[0]).toMatchObject({ queue: "mail", reason: "handoff" });
    const connection = { host: stack.redisServer.host, port: stack.redisServer.port };
    const bull = new BullQueue("mail", { connection, prefix });
    try {
      const job = await bull.getJob(added?.job.id as string);
      expect(await job?.getState()).toBe("active");
      expect({ started: job?.attemptsStarted, made: job?.attemptsMade, data: job?.data }).toEqual({
        started: 1,
        made: 0,
        data: { n: 1 },
      });
      expect(job?.processedOn).toBeGreaterThan(0);
      expect(await bull.getActiveCount()).toBe(1);
      expect(await stack.direct.get(`${prefix}:mail:${handoff?.id}:lock`)).toBe(handoff?.token);
      expect(await stack.direct.pttl(`${prefix}:mail:${handoff?.id}:lock`)).toBeGreaterThan(29_000);
    } finally {
      await bull.close();
    }
  });
});

describe("ids reserved in blocks", () => {
  it("a block of 50 serves the next lone adds under key locks; another writer's ids come after it", async () => {
    const prefix = uniquePrefix("ho");
    const { queue } = recordingQueue(prefix, 30_000, 1000);
    const first = await queue.add("a", {});
    expect(first.id).toBe("1");
    expect(await stack.direct.get(`${prefix}:mail:id`)).toBe("50");
    const connection = { host: stack.redisServer.host, port: stack.redisServer.port };
    const bull = new BullQueue("mail", { connection, prefix });
    try {
      expect((await bull.add("from-bullmq", {})).id).toBe("51");
    } finally {
      await bull.close();
    }
    stack.rest.resetStats();
    const ids = [];
    for (let i = 0; i < 49; i++) ids.push((await queue.add("b", {})).id);
    expect(ids).toEqual(Array.from({ length: 49 }, (_, i) => String(i + 2)));
    expect(stack.rest.stats()).toMatchObject({ globalLockCalls: 0, keyViolations: 0, keyLockingCalls: 49 });
    // Used up: the next lone add reserves the next block, past BullMQ's id.
    expect((await queue.add("c", {})).id).toBe("52");
    expect(await stack.direct.get(`${prefix}:mail:id`)).toBe("101");
    // Another client (another container) has its own block.
    const other = new Queue("mail", {
      redis: createRedis({ url: stack.rest.url, token: stack.rest.token }),
      prefix,
      handoff: { maxWorkers: 1000, start: async () => {} },
    });
    expect((await other.add("d", {})).id).toBe("102");
    expect((await queue.add("e", {})).id).toBe("53");
  });
});

describe("after the review: what must not go wrong around a handoff", () => {
  it("an obliterate restarts the id counter: a block reserved before it is refused, a new one reserved", async () => {
    const prefix = uniquePrefix("ho");
    const { queue } = recordingQueue(prefix, 30_000, 1000);
    expect((await queue.add("a", {})).id).toBe("1");
    const epoch = await stack.direct.hget(`${prefix}:mail:meta`, "nq:idEpoch");
    await queue.obliterate({ force: true });
    // The block still holds 2..50; the counter starts again at 1, so those ids would be reused.
    expect((await queue.add("b", {})).id).toBe("1");
    expect(await stack.direct.hget(`${prefix}:mail:meta`, "nq:idEpoch")).not.toBe(epoch);
    expect((await queue.add("c", {})).id).toBe("2");
  });

  it("a later lease of a job once handed over counts its stall (nq:ho matches only its own lease)", async () => {
    const prefix = uniquePrefix("ho");
    const { queue, requests } = recordingQueue(prefix, 30_000, 1000);
    const job = await queue.add("a", {});
    const { handler } = countingWorker(prefix);
    // Its invocation runs it: the finished job keeps the nq:ho of its handed lease.
    expect((await handler(requests[0] as WorkerEvent, longContext())).completed).toBe(1);
    expect(await stack.direct.hget(`${prefix}:mail:${job.id}`, "nq:ho")).not.toBeNull();
    // Retried with its attempts reset, the next lease writes ats 1 again; when it lapses, that is a
    // real stall, counted.
    await (await queue.getJob(job.id as string))?.retry("completed", { resetAttemptsStarted: true });
    const context = { port: toRedisPort(stack.redis), prefix, queueName: "mail", clock: Date.now };
    const leased = await leaseBatch(context, {
      token: "dies",
      count: 1,
      leaseMs: 1000,
      limiterMax: 0,
      limiterDuration: 0,
      workerName: "",
    });
    expect(leased.jobs).toHaveLength(1);
    const sweeper = loop(prefix, [{ name: "mail", workerFunction: "mail-worker" }]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await sweeper.tick()).stalled).toBe(1);
    expect(await stack.direct.hget(`${prefix}:mail:${job.id}`, "stc")).toBe("1");
  });

  it("an Invoke that fails puts the handed job back in wait and the invocation out of the registry", async () => {
    const prefix = uniquePrefix("ho");
    const failing = (onStartError?: (error: unknown) => void) =>
      new Queue("mail", {
        redis: stack.redis,
        prefix,
        handoff: {
          maxWorkers: 10,
          start: async () => {
            throw new Error("Lambda said no");
          },
          ...(onStartError ? { onStartError } : {}),
        },
      });
    await expect(failing().add("a", {})).rejects.toThrow("Lambda said no");
    const logged: unknown[] = [];
    const [added] = await failing((error) => logged.push(error)).addBulkWithOutcomes([
      { name: "b", data: {} },
    ]);
    expect(added?.handoff).toBe("waiting");
    expect(logged).toHaveLength(1);
    expect(await stack.direct.lrange(`${prefix}:mail:wait`, 0, -1)).toEqual(["2", "1"]);
    expect(await stack.direct.llen(`${prefix}:mail:active`)).toBe(0);
    expect(await stack.direct.zcard(`${prefix}:mail:nq:workers`)).toBe(0);
    expect(await stack.direct.exists(`${prefix}:mail:1:lock`)).toBe(0);
    expect(await stack.direct.hmget(`${prefix}:mail:1`, "nq:ho", "ats", "processedOn")).toEqual([
      null,
      null,
      null,
    ]);
    const { handler, runs } = countingWorker(prefix);
    expect((await handler({ queue: "mail", reason: "sweeper" }, longContext())).completed).toBe(2);
    expect(runs()).toBe(2);
  });

  it("a worker lease of 0 in meta is no lease: the handoff takes its own", async () => {
    const prefix = uniquePrefix("ho");
    await stack.direct.hset(`${prefix}:mail:meta`, "nq:leaseMs", "0");
    const { queue } = recordingQueue(prefix, 20_000, 1000);
    const job = await queue.add("a", {});
    expect(await stack.direct.pttl(`${prefix}:mail:${job.id}:lock`)).toBeGreaterThan(19_000);
  });
});

describe("when the invocation is lost or late", () => {
  it("a lost invocation: the next tick after the lease recovers the job without counting a stall; a later worker runs it once", async () => {
    const prefix = uniquePrefix("ho");
    const { queue, requests } = recordingQueue(prefix, 1000);
    const sweeper = loop(prefix, [{ name: "mail", workerFunction: "mail-worker" }]);
    await sweeper.tick();
    const job = await queue.add("send", {});
    expect(requests[0]?.reason).toBe("handoff");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const result = await sweeper.tick();
    expect(result.stalled).toBe(1);
    expect(sweeper.started).toEqual(["mail"]);
    const hash = await stack.direct.hgetall(`${prefix}:mail:${job.id}`);
    expect({ stc: hash.stc, ats: hash.ats, processedOn: hash.processedOn, ho: hash["nq:ho"] }).toEqual({
      stc: undefined,
      ats: undefined,
      processedOn: undefined,
      ho: undefined,
    });
    const entries = await stack.direct.xrange(`${prefix}:mail:events`, "-", "+");
    expect(entries.map(([, f]) => f[1])).not.toContain("stalled");
    const { handler, runs } = countingWorker(prefix);
    const summary = await handler({ queue: "mail", reason: "sweeper" }, longContext());
    expect({ completed: summary.completed, runs: runs() }).toEqual({ completed: 1, runs: 1 });
    const done = await queue.getJob(job.id as string);
    expect({
      started: done?.attemptsStarted,
      made: done?.attemptsMade,
      stalls: done?.stalledCounter,
    }).toEqual({
      started: 1,
      made: 1,
      stalls: 0,
    });
  });

  it("a late invocation drops the job whose lease lapsed and that another worker took: it runs once", async () => {
    const prefix = uniquePrefix("ho");
    const { queue, requests } = recordingQueue(prefix, 1000);
    const sweeper = loop(prefix, [{ name: "mail", workerFunction: "mail-worker" }]);
    await sweeper.tick();
    await queue.add("send", {});
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await sweeper.tick()).stalled).toBe(1);
    const { handler, runs } = countingWorker(prefix);
    expect((await handler({ queue: "mail", reason: "sweeper" }, longContext())).completed).toBe(1);
    // The handed-over invocation arrives now, with its lapsed lease.
    const late = await handler(requests[0] as WorkerEvent, longContext());
    expect({ completed: late.completed, lost: late.lostLeases, runs: runs() }).toEqual({
      completed: 0,
      lost: 1,
      runs: 1,
    });
    expect(await stack.direct.zcard(`${prefix}:mail:nq:workers`)).toBe(0);
  });
});

describe("when a worker may not take the job now, it waits as any add", () => {
  it("paused, rate limited, at maxWorkers, or jobs waiting ahead: not handed over", async () => {
    const prefix = uniquePrefix("ho");
    const { queue, requests } = recordingQueue(prefix, 30_000, 2);
    const lone = async () => (await queue.addBulkWithOutcomes([{ name: "send", data: {} }]))[0]?.handoff;
    await queue.pause();
    expect(await lone()).toBe("waiting");
    await queue.resume();
    await queue.drain();
    await stack.direct.set(`${prefix}:mail:limiter`, "1", "PX", 60_000);
    expect(await lone()).toBe("waiting");
    await stack.direct.del(`${prefix}:mail:limiter`);
    await queue.drain();
    expect(await lone()).toBe("handed");
    expect(await lone()).toBe("handed");
    // Two handed-over invocations run: at maxWorkers 2 the job waits and nothing is started.
    expect(await lone()).toBe("waiting");
    expect(requests.map((r) => r.reason)).toEqual(["kick", "kick", "handoff", "handoff"]);
    await stack.direct.del(`${prefix}:mail:nq:workers`);
    // A job waits ahead: the new one queues behind it (a worker is started for both).
    expect(await lone()).toBe("waiting");
    expect(requests.at(-1)).toEqual({ queue: "mail", reason: "kick" });
  });

  it("a delay, a priority or several jobs take the usual add (and its wake); a custom id that exists is a duplicate", async () => {
    const prefix = uniquePrefix("ho");
    const { queue, requests } = recordingQueue(prefix);
    const one = async (opts: JobsOptions) =>
      (await queue.addBulkWithOutcomes([{ name: "a", data: {}, opts }]))[0];
    expect((await one({ delay: 5000 }))?.handoff).toBeUndefined();
    expect((await one({ priority: 3 }))?.handoff).toBeUndefined();
    const bulk = await queue.addBulkWithOutcomes([
      { name: "d", data: {} },
      { name: "e", data: {} },
    ]);
    expect(bulk.map((o) => o.handoff)).toEqual([undefined, undefined]);
    expect(requests).toEqual([]);
    await queue.obliterate({ force: true });
    // A custom id (an Idempotency-Key, a producer's derived id) is handed over; the same id again is
    // a duplicate: nothing written, nothing started.
    expect(await one({ jobId: "own" })).toMatchObject({ outcome: "created", handoff: "handed" });
    expect(await one({ jobId: "own" })).toMatchObject({ outcome: "duplicated" });
    expect((await one({ jobId: "own" }))?.handoff).toBeUndefined();
    expect(requests.map((r) => [r.reason, r.handoff?.id])).toEqual([["handoff", "own"]]);
  });

  it("refuses a handoff option that is not one, naming the field", () => {
    expect(
      () => new Queue("mail", { redis: stack.redis, handoff: { maxWorkers: 0, start: async () => {} } }),
    ).toThrow(/handoff\.maxWorkers/);
    expect(() => new Queue("mail", { redis: stack.redis, handoff: { maxWorkers: 1 } as never })).toThrow(
      /handoff\.start/,
    );
  });
});
