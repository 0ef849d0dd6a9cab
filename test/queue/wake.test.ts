/**
 * Queue's `wake` option (issue 24, point 5): an add that created a job ready to run wakes what runs
 * the queue at once; one that created only delayed jobs wakes it with the earliest due time when that
 * comes within a minute, and a function worker started with that `wakeAt` runs the job on time —
 * without waiting for the sweeper's next tick.
 */
import { describe, expect, it } from "vitest";
import { createFunctionWorker, Queue, ValidationError, type WakeHint } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

function recordingQueue(prefix: string) {
  const woken: { queue: string; hint: WakeHint }[] = [];
  const queue = new Queue("q", {
    redis: sharedRedis(),
    prefix,
    wake: (name, hint) => {
      woken.push({ queue: name, hint });
    },
  });
  return { queue, woken };
}

describe("Queue's wake option", () => {
  it("wakes at once for a ready job, with wakeAt for one due within a minute, not for later or duplicates", async () => {
    const { queue, woken } = recordingQueue(uniquePrefix("wake"));
    await queue.add("now", {}, { jobId: "a" });
    expect(woken).toEqual([{ queue: "q", hint: {} }]);
    const soon = await queue.add("soon", {}, { delay: 5000 });
    expect(woken[1]).toEqual({ queue: "q", hint: { wakeAt: soon.timestamp + 5000 } });
    await queue.add("later", {}, { delay: 120_000 });
    await queue.add("again", {}, { jobId: "a" });
    expect(woken).toHaveLength(2);
    // A bulk add with both: at once.
    await queue.addBulk([
      { name: "d", data: {}, opts: { delay: 3000 } },
      { name: "r", data: {} },
    ]);
    expect(woken[2]).toEqual({ queue: "q", hint: {} });
  });

  it("a function worker woken with the wakeAt runs the delayed job within a second of its due time", async () => {
    const prefix = uniquePrefix("wake");
    const starts: number[] = [];
    const worker = createFunctionWorker(
      {
        queue: "q",
        prefix,
        jobTimeoutMs: 5000,
        processor: async () => {
          starts.push(Date.now());
        },
      },
      { connect: () => ({ redis: sharedRedis() }), onRegisterError: () => {} },
    );
    let invocation: Promise<unknown> | undefined;
    const queue = new Queue("q", {
      redis: sharedRedis(),
      prefix,
      // As the worker kick does on Lambda: an asynchronous invocation with the hint.
      wake: (queueName, hint) => {
        invocation = worker.run("woken", 20_000, { queue: queueName, reason: "wake", ...hint });
      },
    });
    const job = await queue.add("soon", {}, { delay: 1500 });
    await invocation;
    expect(starts).toHaveLength(1);
    expect((starts[0] as number) - (job.timestamp + 1500)).toBeLessThan(1000);
    expect((starts[0] as number) - (job.timestamp + 1500)).toBeGreaterThanOrEqual(-5);
  });

  it("refuses a wake that is not a function", () => {
    expect(() => new Queue("q", { redis: sharedRedis(), wake: 5 as never })).toThrow(ValidationError);
  });
});
