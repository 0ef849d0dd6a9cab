/**
 * Everyday faults a worker rides out (issue 23): one 500 in the middle of a drain, an outage longer
 * than the retry window (what it finished is acked by the next drain), and CPU-bound processors that
 * would starve the lease extender. (A lease answer that arrives after the lease lapsed:
 * call-failures.test.ts.)
 *
 * A private stack, for fault injection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, Queue, Worker } from "../../core/index.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Burns the CPU for `ms` without giving the event loop a turn. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

async function addJobs(prefix: string, count: number): Promise<void> {
  await new Queue("q", { redis: stack.redis, prefix }).addBulk(
    Array.from({ length: count }, (_, n) => ({ name: "j", data: { n } })),
  );
}

async function states(prefix: string): Promise<Record<string, number>> {
  const key = (name: string) => `${prefix}:q:${name}`;
  return {
    active: await stack.direct.llen(key("active")),
    wait: await stack.direct.llen(key("wait")),
    completed: await stack.direct.zcard(key("completed")),
    failed: await stack.direct.zcard(key("failed")),
  };
}

describe("a worker riding out transient faults", () => {
  it("one script call answered 500 mid-drain: the drain does not reject, all 40 jobs complete once", async () => {
    const prefix = uniquePrefix();
    await addJobs(prefix, 40);
    const runs = new Map<string, number>();
    const worker = new Worker(
      "q",
      async (job: ActiveJob) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        await sleep(50);
        return job.id;
      },
      { redis: stack.redis, prefix, concurrency: 10, batchSize: 20, leaseMs: 5000 },
    );
    const errors: string[] = [];
    worker.on("error", (error) => errors.push(error.message));
    const drain = worker.drain();
    await sleep(120);
    stack.rest.setFault({ kind: "status-500", command: "evalsha", times: 1 });
    try {
      const summary = await drain;
      expect(summary.completed).toBe(40);
    } finally {
      stack.rest.setFault(null);
    }
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(runs.size).toBe(40);
    expect(await states(prefix)).toEqual({ active: 0, wait: 0, completed: 40, failed: 0 });
    // The retry was told, without the request it carried.
    expect(errors).toEqual([
      expect.stringMatching(
        /^Redis script \w+ \(EVALSHA\) on 127\.0\.0\.1:\d+ failed \(transient, unavailable\): ERR injected/,
      ),
    ]);
  });

  it("an outage longer than the retry window: the next drain acks what the failed one finished", async () => {
    const prefix = uniquePrefix();
    await addJobs(prefix, 5);
    const runs: string[] = [];
    const worker = new Worker(
      "q",
      async (job: ActiveJob) => {
        runs.push(job.id);
        await sleep(100);
        return "done";
      },
      { redis: stack.redis, prefix, concurrency: 5, leaseMs: 10_000, retry: { windowMs: 300 } },
    );
    worker.on("error", () => {});
    const first = worker.drain();
    await sleep(50);
    stack.rest.setFault({ kind: "status-500", command: "evalsha" });
    try {
      await expect(first).rejects.toThrow(/transient/);
    } finally {
      stack.rest.setFault(null);
    }
    expect(await states(prefix)).toMatchObject({ active: 5, completed: 0 });
    const second = await worker.drain();
    expect(second.completed).toBe(5);
    expect(runs.sort()).toEqual(["1", "2", "3", "4", "5"]);
    expect(await states(prefix)).toEqual({ active: 0, wait: 0, completed: 5, failed: 0 });
  });

  it("CPU-bound processors (concurrency 1, batchSize 6, lease 3 s, six 2 s jobs) keep every lease", async () => {
    const prefix = uniquePrefix();
    await addJobs(prefix, 6);
    const runs: string[] = [];
    const worker = new Worker(
      "q",
      async (job: ActiveJob) => {
        runs.push(job.id);
        busy(2000);
        return job.id;
      },
      { redis: stack.redis, prefix, concurrency: 1, batchSize: 6, leaseMs: 3000 },
    );
    const errors: string[] = [];
    worker.on("error", (error) => errors.push(error.message));
    const summary = await worker.drain();
    expect({ completed: summary.completed, lostLeases: summary.lostLeases, errors }).toEqual({
      completed: 6,
      lostLeases: 0,
      errors: [],
    });
    expect(runs.sort()).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(await states(prefix)).toEqual({ active: 0, wait: 0, completed: 6, failed: 0 });
  }, 30_000);
});
