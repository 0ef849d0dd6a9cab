/**
 * Processor files (BullMQ's sandboxed processors) run in worker threads: CPU-bound jobs leave the
 * worker's own event loop free, so its lease extensions and acks go out on time; progress, logs and
 * errors travel across; a thread that ignores its stop is ended; the function worker takes a file too.
 */
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createFunctionWorker, Queue, ValidationError, Worker } from "../../core/index.ts";
import "../../sandbox/register.ts";
import { loopLag } from "../support/loop-lag.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

const cpuProcessor = fileURLToPath(new URL("./fixtures/cpu-processor.mjs", import.meta.url));
const spinProcessor = new URL("./fixtures/spin-processor.mjs", import.meta.url);

const workers: Worker[] = [];
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.close()));
});

function track<T extends Worker>(worker: T): T {
  workers.push(worker);
  return worker;
}

describe("processor files", () => {
  it("CPU-bound jobs run in threads: the event loop stays free, every lease kept, progress and logs kept", async () => {
    const prefix = uniquePrefix("sbx");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    await queue.addBulk(Array.from({ length: 6 }, (_, n) => ({ name: "crunch", data: { n, ms: 1000 } })));
    // Six 1 s jobs, two at a time, on a 1.5 s lease: the queued ones need extensions while all run.
    const worker = track(
      new Worker("q", cpuProcessor, {
        redis: sharedRedis(),
        prefix,
        concurrency: 2,
        batchSize: 6,
        leaseMs: 1500,
      }),
    );
    const progress: unknown[] = [];
    worker.on("progress", (_, value) => progress.push(value));
    const { result: summary, maxLagMs } = await loopLag(() => worker.drain());
    expect({ completed: summary.completed, lostLeases: summary.lostLeases }).toEqual({
      completed: 6,
      lostLeases: 0,
    });
    expect(maxLagMs).toBeLessThan(300);
    const job = await queue.getJob("3");
    expect(job?.returnvalue).toEqual({ id: "3", attemptsMade: 0, data: { n: 2, ms: 1000 } });
    expect(job?.progress).toBe(100);
    expect((await queue.getJobLogs("3")).logs).toEqual(["start 3"]);
    expect(progress.filter((value) => value === 100)).toHaveLength(6);
  }, 30_000);

  it("errors cross by name: a TypeError is retried, an UnrecoverableError fails at once", async () => {
    const prefix = uniquePrefix("sbx");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const typeError = await queue.add("t", { fail: "bad input" }, { attempts: 2 });
    const final = await queue.add("u", { fail: "unrecoverable" }, { attempts: 5 });
    const worker = track(new Worker("q", cpuProcessor, { redis: sharedRedis(), prefix, concurrency: 2 }));
    await worker.drain();
    await worker.drain();
    const failedType = await queue.getJob(typeError.id);
    expect({ reason: failedType?.failedReason, made: failedType?.attemptsMade }).toEqual({
      reason: "bad input",
      made: 2,
    });
    expect(failedType?.stacktrace[0]).toMatch(/^TypeError: bad input/);
    const failedFinal = await queue.getJob(final.id);
    expect({ reason: failedFinal?.failedReason, made: failedFinal?.attemptsMade }).toEqual({
      reason: "no retry for this one",
      made: 1,
    });
  });

  it("a thread that ignores its stop is ended: the job times out, the worker goes on and closes", async () => {
    const prefix = uniquePrefix("sbx");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const stuck = await queue.add("stuck", {}, { timeout: 300 });
    const worker = track(new Worker("q", spinProcessor, { redis: sharedRedis(), prefix, concurrency: 1 }));
    const summary = await worker.drain();
    expect(summary.failed).toBe(1);
    expect((await queue.getJob(stuck.id))?.failedReason).toMatch(/timed out after 300 ms/);
    await worker.close();
  }, 15_000);

  it("the function worker (workerHandler's core) takes a file, and an empty path is refused", async () => {
    const prefix = uniquePrefix("sbx");
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    await queue.add("crunch", { ms: 10 });
    const functionWorker = createFunctionWorker(
      { queue: "q", processor: cpuProcessor, prefix, jobTimeoutMs: 5000 },
      { connect: () => ({ redis: sharedRedis() }), onRegisterError: () => {} },
    );
    const { result } = await functionWorker.run("invocation-1", 20_000);
    expect(result.completed).toBe(1);
    expect(() => new Worker("q", "", { redis: sharedRedis(), prefix })).toThrow(ValidationError);
  });
});
