import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, UnrecoverableError, Worker } from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function setup(workerOptions: Partial<ConstructorParameters<typeof Worker>[2]> = {}) {
  const prefix = uniquePrefix();
  const redis = sharedRedis();
  const queue = new Queue("q", { redis, prefix });
  const seen: string[] = [];
  const make = (processor: (job: ActiveJob) => Promise<unknown>) =>
    new Worker("q", processor, { redis, prefix, batchSize: 5, ...workerOptions });
  return { prefix, queue, seen, make };
}

describe("Worker.drain", () => {
  it("completes jobs in FIFO order and writes BullMQ's completion fields", async () => {
    const { prefix, queue, seen, make } = setup();
    await queue.addBulk([1, 2, 3].map((n) => ({ name: "n", data: { n } })));
    const worker = make(async (job) => {
      seen.push(job.id);
      return { doubled: (job.data as { n: number }).n * 2 };
    });
    const summary = await worker.drain();
    expect(summary).toMatchObject({ leased: 3, completed: 3, failed: 0, stoppedBecause: "empty" });
    expect(seen).toEqual(["1", "2", "3"]);
    const hash = await direct.hgetall(`${prefix}:q:2`);
    expect(hash).toMatchObject({ returnvalue: '{"doubled":4}', atm: "1", ats: "1" });
    expect(hash.finishedOn).toBeDefined();
    expect(await direct.zcard(`${prefix}:q:completed`)).toBe(3);
    expect(await direct.llen(`${prefix}:q:active`)).toBe(0);
    expect(await direct.exists(`${prefix}:q:1:lock`)).toBe(0);
    const events = (await direct.xrange(`${prefix}:q:events`, "-", "+")).map(([, f]) => f[1]);
    expect(events.filter((e) => e === "active").length).toBe(3);
    expect(events.filter((e) => e === "completed").length).toBe(3);
    expect(events.at(-1)).toBe("drained");
  });

  it("retries with backoff to delayed, then fails for good after `attempts` runs", async () => {
    const { prefix, queue, make } = setup();
    // A backoff long enough that a slow machine's drain never reaches the retry's due time.
    await queue.add("flaky", {}, { attempts: 3, backoff: { type: "fixed", delay: 400 } });
    let runs = 0;
    const worker = make(async () => {
      runs += 1;
      throw new Error(`boom ${runs}`);
    });
    const first = await worker.drain();
    expect(first).toMatchObject({ retried: 1, stoppedBecause: "empty" });
    expect(first.nextDueAt).toBeGreaterThan(Date.now() - 100);
    expect(await direct.zcard(`${prefix}:q:delayed`)).toBe(1);
    for (let i = 0; i < 2; i++) {
      await new Promise((r) => setTimeout(r, 430));
      await worker.drain();
    }
    expect(runs).toBe(3);
    const hash = await direct.hgetall(`${prefix}:q:1`);
    expect(hash).toMatchObject({ atm: "3", ats: "3", failedReason: "boom 3" });
    expect(JSON.parse(hash.stacktrace as string)).toHaveLength(3);
    const events = (await direct.xrange(`${prefix}:q:events`, "-", "+")).map(([, f]) => f);
    expect(events.filter((f) => f[1] === "failed")).toHaveLength(1);
    expect(events.find((f) => f[1] === "retries-exhausted")).toEqual([
      "event",
      "retries-exhausted",
      "jobId",
      "1",
      "attemptsMade",
      "3",
    ]);
  });

  it("fails an UnrecoverableError at once and honours removeOnComplete", async () => {
    const { prefix, queue, make } = setup();
    await queue.add("bad", {}, { attempts: 5 });
    await queue.add("ok", {}, { removeOnComplete: true });
    const worker = make(async (job) => {
      if (job.name === "bad") throw new UnrecoverableError("nope");
      return 1;
    });
    await worker.drain();
    expect(await direct.zrange(`${prefix}:q:failed`, 0, -1)).toEqual(["1"]);
    expect(await direct.exists(`${prefix}:q:2`)).toBe(0);
    const events = (await direct.xrange(`${prefix}:q:events`, "-", "+")).map(([, f]) => f[1]);
    expect(events).not.toContain("retries-exhausted");
  });
});
