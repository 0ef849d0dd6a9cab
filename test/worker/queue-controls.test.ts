import { describe, expect, it } from "vitest";
import { type ActiveJob, Queue, Worker, type WorkerOptions } from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

function setup(options: Partial<WorkerOptions> = {}) {
  const prefix = uniquePrefix();
  const redis = sharedRedis();
  const queue = new Queue("q", { redis, prefix });
  const seen: string[] = [];
  const worker = new Worker(
    "q",
    async (job: ActiveJob) => {
      seen.push(job.id);
      return job.id;
    },
    { redis, prefix, batchSize: 10, ...options },
  );
  return { prefix, queue, worker, seen };
}

describe("what the lease honours", () => {
  it("takes wait before prioritized, priorities lowest first, lifo first, FIFO otherwise", async () => {
    const { queue, worker, seen } = setup();
    await queue.add("p5", {}, { priority: 5 });
    await queue.add("fifo-a", {});
    await queue.add("p1", {}, { priority: 1 });
    await queue.add("fifo-b", {});
    await queue.add("lifo", {}, { lifo: true });
    await worker.drain();
    expect(seen).toEqual(["5", "2", "4", "3", "1"]);
  });

  it("promotes due delayed jobs (to prioritized when they have a priority) and reports the next due time", async () => {
    const { prefix, queue, worker, seen } = setup();
    // Due after the first drain even on a slow, loaded machine.
    await queue.add("soon", {}, { delay: 1000 });
    await queue.add("soon-prio", {}, { delay: 1000, priority: 2 });
    await queue.add("later", {}, { delay: 60_000 });
    const first = await worker.drain();
    expect(first).toMatchObject({ leased: 0, stoppedBecause: "empty" });
    expect(first.nextDueAt).toBeGreaterThan(Date.now());
    await new Promise((r) => setTimeout(r, Math.max(0, (first.nextDueAt ?? 0) - Date.now()) + 50));
    await worker.drain();
    expect(seen).toEqual(["1", "2"]);
    const events = (await direct.xrange(`${prefix}:q:events`, "-", "+")).map(([, f]) => f);
    expect(events.filter((f) => f[1] === "waiting" && f[5] === "delayed").map((f) => f[3])).toEqual([
      "1",
      "2",
    ]);
    expect(await direct.hget(`${prefix}:q:1`, "delay")).toBe("0");
  });

  it("stops on a paused queue and resumes after resume()", async () => {
    const { queue, worker, seen } = setup();
    await queue.add("x", {});
    await queue.pause();
    expect((await worker.drain()).stoppedBecause).toBe("paused");
    expect(seen).toEqual([]);
    await queue.resume();
    expect((await worker.drain()).completed).toBe(1);
  });

  it("leases no more than the limiter's remaining budget", async () => {
    const { prefix, queue, worker, seen } = setup({ limiter: { max: 3, duration: 10_000 } });
    await queue.addBulk(Array.from({ length: 5 }, (_, n) => ({ name: "n", data: { n } })));
    const summary = await worker.drain();
    expect(seen).toHaveLength(3);
    expect(summary.stoppedBecause).toBe("rate-limited");
    expect(summary.nextDueAt).toBeGreaterThan(Date.now() + 5000);
    expect(await direct.get(`${prefix}:q:limiter`)).toBe("3");
  });

  it("honours the global concurrency in meta", async () => {
    const { prefix, queue, worker } = setup();
    await direct.hset(`${prefix}:q:meta`, "concurrency", "2");
    await queue.addBulk(Array.from({ length: 4 }, (_, n) => ({ name: "n", data: { n } })));
    let running = 0;
    let most = 0;
    const busy = new Worker(
      "q",
      async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 30));
        running -= 1;
      },
      { redis: sharedRedis(), prefix: worker.context.prefix, batchSize: 10 },
    );
    const summary = await busy.drain();
    expect(summary.completed).toBe(4);
    expect(most).toBe(2);
  });

  it("fails a job carrying `defa` at once with that reason, without running it", async () => {
    const { prefix, queue, worker, seen } = setup();
    await queue.add("doomed", {}, { attempts: 5 });
    await direct.hset(`${prefix}:q:1`, "defa", "job stalled more than allowable limit");
    const summary = await worker.drain();
    expect(seen).toEqual([]);
    expect(summary.failed).toBe(1);
    const hash = await direct.hgetall(`${prefix}:q:1`);
    expect(hash.failedReason).toBe("job stalled more than allowable limit");
    expect(hash.defa).toBeUndefined();
  });

  it("keeps only the newest N completed jobs and prunes by age", async () => {
    const { prefix, queue, worker } = setup({ removeOnComplete: { count: 2 } });
    await queue.addBulk(Array.from({ length: 5 }, (_, n) => ({ name: "n", data: { n } })));
    await worker.drain();
    expect(await direct.zrange(`${prefix}:q:completed`, 0, -1)).toEqual(["4", "5"]);
    expect(await direct.exists(`${prefix}:q:1`, `${prefix}:q:2`, `${prefix}:q:3`)).toBe(0);
  });
});

describe("Worker.run", () => {
  it("polls without blocking commands and stops cleanly on its signal", async () => {
    const { queue, worker, seen } = setup({ poll: { minMs: 20, maxMs: 50 } });
    const controller = new AbortController();
    const running = worker.run({ signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100));
    await queue.add("late", {});
    const deadline = Date.now() + 3000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await running;
    expect(seen).toEqual(["1"]);
  });
});
