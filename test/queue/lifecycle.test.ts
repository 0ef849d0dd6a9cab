/**
 * BullMQ's lifecycle and first lines: clear errors for ioredis `connection` options, a missing options
 * object and `opts.repeat`; `close()` (idempotent, then every call refused, nothing written);
 * `waitUntilReady`; `Worker.isRunning` and `close(force)`.
 */
import { describe, expect, inject, it } from "vitest";
import {
  type ActiveJob,
  ClosedError,
  createRedis,
  FlowProducer,
  NotSupportedError,
  Queue,
  ValidationError,
  Worker,
} from "../../core/index.ts";
import { keyspaceDigest } from "../support/keyspace.ts";
import {
  directConnectionForFile,
  keysUnder,
  sharedConnectionOptions,
  sharedRedis,
  uniquePrefix,
} from "../support/stack.ts";

const direct = directConnectionForFile();

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

const noop = async () => "ok";

describe("BullMQ habits get clear errors", () => {
  const connection = sharedConnectionOptions();
  const habits: [string, () => unknown][] = [
    ["Queue", () => new Queue("q", { connection } as never)],
    ["Worker", () => new Worker("q", noop, { connection } as never)],
    ["FlowProducer", () => new FlowProducer({ connection } as never)],
  ];
  for (const [kind, construct] of habits) {
    it(`${kind} with ioredis connection options says to pass redis: createRedis()`, () => {
      const error = caught(construct);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe("connection");
      expect((error as Error).message).toContain("createRedis");
      expect((error as Error).message).toContain("HTTP");
    });
  }

  it("no options object, or a redis that is not a client, names the field", () => {
    for (const construct of [
      () => new (Queue as unknown as new (name: string) => Queue)("q"),
      () => new (Worker as unknown as new (name: string, p: unknown) => Worker)("q", noop),
    ]) {
      const error = caught(construct) as ValidationError;
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.field).toBe("options");
      expect(error.message).toContain("createRedis");
    }
    const error = caught(() => new Queue("q", { redis: { url: "http://127.0.0.1:1" } } as never));
    expect((error as ValidationError).field).toBe("redis");
  });

  it("opts.repeat points to upsertJobScheduler and writes nothing", async () => {
    const prefix = uniquePrefix("habit");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const error = await queue.add("x", {}, { repeat: { every: 1000 } } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("opts.repeat");
    expect((error as Error).message).toContain("upsertJobScheduler");
    expect(await keysUnder(direct, prefix)).toEqual([]);
  });
});

describe("Queue lifecycle", () => {
  it("waitUntilReady answers once Redis does, and rejects with a wrong token", async () => {
    const queue = new Queue("q", { redis: sharedRedis(), prefix: uniquePrefix("ready") });
    await expect(queue.waitUntilReady()).resolves.toBeUndefined();
    const wrong = createRedis({ url: inject("restUrl"), token: "not-the-token" });
    await expect(new Queue("q", { redis: wrong }).waitUntilReady()).rejects.toThrow();
  });

  it("close() is idempotent; afterwards the queue and the jobs it returned refuse every call", async () => {
    const prefix = uniquePrefix("close");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const job = await queue.add("a", { n: 1 });
    expect(queue.closing).toBeUndefined();
    const before = await keyspaceDigest(direct, prefix);
    const first = queue.close();
    expect(queue.closing).toBe(first);
    await first;
    await queue.close();
    for (const call of [
      () => queue.add("b", {}),
      () => queue.getJob(job.id),
      () => queue.getJobCounts(),
      () => queue.pause(),
      () => queue.drain(),
      () => job.remove(),
      () => job.getState(),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ClosedError);
      expect((error as Error).message).toContain('Queue "q"');
    }
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
    // Another Queue on the same name is unaffected.
    expect(await new Queue("q", { redis: sharedRedis(), prefix }).getJobState(job.id)).toBe("waiting");
  });

  it("FlowProducer.close refuses later adds", async () => {
    const prefix = uniquePrefix("flowclose");
    const flows = new FlowProducer({ redis: sharedRedis(), prefix });
    await flows.close();
    const error = await flows.add({ name: "p", queueName: "q", data: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClosedError);
    expect(await keysUnder(direct, prefix)).toEqual([]);
  });

  it("getWorkers is not supported, with the reason", async () => {
    const queue = new Queue("q", { redis: sharedRedis(), prefix: uniquePrefix("workers") });
    const error = await queue.getWorkers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotSupportedError);
    expect((error as Error).message).toContain("CLIENT LIST");
    await expect(queue.getWorkersCount()).rejects.toBeInstanceOf(NotSupportedError);
  });
});

/** A processor whose jobs finish only when released, so a test can close mid-job. */
function gate() {
  const started: string[] = [];
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const processor = async (job: ActiveJob) => {
    started.push(job.id);
    await opened;
    return `done ${job.id}`;
  };
  return { started, open, processor };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error("condition never held");
}

describe("Worker lifecycle", () => {
  it("close() stops leasing, lets running jobs finish and ack, hands unstarted ones back in order", async () => {
    const prefix = uniquePrefix("wclose");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const ids = (await queue.addBulk([1, 2, 3, 4, 5, 6].map((n) => ({ name: "j", data: { n } })))).map(
      (job) => job.id,
    );
    const { started, open, processor } = gate();
    const worker = new Worker("q", processor, { redis: sharedRedis(), prefix, concurrency: 2, batchSize: 6 });
    expect(worker.isRunning()).toBe(false);
    const running = worker.run();
    await until(() => started.length === 2);
    expect(worker.isRunning()).toBe(true);
    const closing = worker.close();
    let closed = false;
    void closing.then(() => {
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(false); // waits for the two running jobs
    open();
    await closing;
    await running;
    expect(worker.isRunning()).toBe(false);
    expect(started).toEqual(ids.slice(0, 2));
    expect(await queue.getJobCounts("completed", "active", "wait")).toEqual({
      completed: 2,
      active: 0,
      wait: 4,
    });
    // The unstarted four are back at the front, in their order.
    expect((await queue.getWaiting()).map((job) => job.id)).toEqual(ids.slice(2));
    await expect(worker.drain()).rejects.toBeInstanceOf(ClosedError);
    await expect(worker.run()).rejects.toBeInstanceOf(ClosedError);
    await worker.close();
  });

  it("close(true) resolves without waiting for running jobs; their leases lapse", async () => {
    const prefix = uniquePrefix("wforce");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const job = await queue.add("j", {});
    const { started, open, processor } = gate();
    const worker = new Worker("q", processor, { redis: sharedRedis(), prefix, concurrency: 1 });
    const draining = worker.drain().catch((e: unknown) => e);
    await until(() => started.length === 1);
    await worker.close(true);
    expect(await queue.getJobState(job.id)).toBe("active");
    open();
    // The drain cannot ack through a closed worker: it ends with the ClosedError, the job stays
    // active for the stalled check (as BullMQ's force close leaves it).
    expect(await draining).toBeInstanceOf(ClosedError);
    expect(await queue.getJobState(job.id)).toBe("active");
  });

  it("waitUntilReady reads once and is refused after close", async () => {
    const worker = new Worker("q", noop, { redis: sharedRedis(), prefix: uniquePrefix("wready") });
    await expect(worker.waitUntilReady()).resolves.toBeUndefined();
    await worker.close();
    await expect(worker.waitUntilReady()).rejects.toBeInstanceOf(ClosedError);
  });
});
