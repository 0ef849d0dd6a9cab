/**
 * `job.waitUntilFinished(queueEvents, ttl)` on nimbusq's QueueEvents, with a real BullMQ producer and
 * Worker on the other side (and BullMQ's own waitUntilFinished beside it), and with nimbusq's Worker:
 * completion, failure, a job that finished before the call, a job removed when it finished, the ttl,
 * and a QueueEvents closed while waiting.
 */
import type { Job as BullJob } from "bullmq";
import { describe, expect, it } from "vitest";
import {
  ClosedError,
  type Job,
  JobFailedError,
  JobNotFoundError,
  Queue,
  TimeoutError,
  ValidationError,
  Worker,
} from "../../core/index.ts";
import { type Interop, interopPeers, sleep, waitFor } from "../support/bullmq-peer.ts";
import { nimbusWorker, runLoop } from "../support/mixed-fleet.ts";
import { bullEvents, nimbusEvents, record } from "../support/queue-events.ts";

const peers = interopPeers();

async function bullProcessor(job: BullJob): Promise<unknown> {
  if (job.name === "slow") await sleep(300);
  if (job.name.startsWith("bad")) throw new Error(`failed: ${job.name} (${job.data.n})`);
  return { echoed: job.data, by: "bullmq" };
}

/** The outcome of a wait as a comparable value: the result, or the error's class and message. */
async function outcome(wait: Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: await wait };
  } catch (error) {
    return { rejected: (error as Error).message, name: (error as Error).name };
  }
}

/** nimbusq's Job object for a job BullMQ added. */
async function nimbusJob(io: Interop, id: string): Promise<Job> {
  const job = await io.queue("q").getJob(id);
  if (!job) throw new Error(`no job ${id}`);
  return job;
}

describe("waitUntilFinished with a real BullMQ producer and Worker", () => {
  it("resolves with the return value or rejects with the failedReason, as BullMQ's does", async () => {
    const io = peers("wuf");
    const events = nimbusEvents(io, "q");
    const bullQueueEvents = bullEvents(io, "q");
    await Promise.all([events.waitUntilReady(), bullQueueEvents.waitUntilReady()]);
    const queue = io.bullQueue("q");
    const ok = await queue.add("slow", { n: 1 });
    const bad = await queue.add("bad-slow", { n: 2 }, { attempts: 2 });
    const okId = ok.id as string;
    const badId = bad.id as string;
    const waits = [
      (await nimbusJob(io, okId)).waitUntilFinished(events, 10_000),
      (await nimbusJob(io, badId)).waitUntilFinished(events, 10_000),
    ].map(outcome);
    const bullWaits = [
      ok.waitUntilFinished(bullQueueEvents, 10_000),
      bad.waitUntilFinished(bullQueueEvents, 10_000),
    ].map(outcome);
    io.worker("q", bullProcessor);
    const [nimbusOk, nimbusBad] = await Promise.all(waits);
    const [bullOk, bullBad] = await Promise.all(bullWaits);
    expect(nimbusOk).toEqual({ resolved: { echoed: { n: 1 }, by: "bullmq" } });
    expect(nimbusOk).toEqual(bullOk);
    expect(nimbusBad).toEqual({ rejected: "failed: bad-slow (2)", name: "JobFailedError" });
    expect((nimbusBad as { rejected: string }).rejected).toBe((bullBad as { rejected: string }).rejected);
    // The failure names its job and queue beside the BullMQ-identical message.
    const again = await outcome((await nimbusJob(io, badId)).waitUntilFinished(events));
    expect(again).toEqual(nimbusBad);
    const error = await (await nimbusJob(io, badId)).waitUntilFinished(events).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error).toMatchObject({ failedReason: "failed: bad-slow (2)", jobId: badId, queueName: "q" });
  });

  it("settles for a job that finished before the call (the events are already past)", async () => {
    const io = peers("wuf");
    const queue = io.bullQueue("q");
    const done = await queue.add("quick", { n: 3 });
    const failed = await queue.add("bad", { n: 4 });
    const worker = io.worker("q", bullProcessor);
    await worker.started(2);
    await sleep(200);
    // A QueueEvents from "$": the completed and failed events are behind it.
    const events = nimbusEvents(io, "q");
    await expect((await nimbusJob(io, done.id as string)).waitUntilFinished(events, 5_000)).resolves.toEqual({
      echoed: { n: 3 },
      by: "bullmq",
    });
    await expect((await nimbusJob(io, failed.id as string)).waitUntilFinished(events, 5_000)).rejects.toThrow(
      "failed: bad (4)",
    );
    const bullQueueEvents = bullEvents(io, "q");
    await expect(done.waitUntilFinished(bullQueueEvents, 5_000)).resolves.toEqual({
      echoed: { n: 3 },
      by: "bullmq",
    });
  });

  it("a job removed when it completed: resolves when the wait began first, else JobNotFoundError", async () => {
    const io = peers("wuf");
    const events = nimbusEvents(io, "q");
    await events.waitUntilReady();
    const queue = io.bullQueue("q");
    const job = await queue.add("slow", { n: 5 }, { removeOnComplete: true });
    const waiting = (await nimbusJob(io, job.id as string)).waitUntilFinished(events, 5_000);
    io.worker("q", bullProcessor);
    await expect(waiting).resolves.toEqual({ echoed: { n: 5 }, by: "bullmq" });
    expect(await io.raw.exists(io.key("q", job.id as string))).toBe(0);
    // Gone before the call: its completed event is behind the reader and its hash deleted.
    const nimbusQueue = new Queue("q", { redis: io.redis, prefix: io.prefix });
    const added = await nimbusQueue.add("slow", { n: 6 }, { removeOnComplete: true });
    const heard = record(events, [`completed:${added.id}`]);
    await waitFor(() => heard.length === 1, "the reader to pass the job's completed event");
    expect(await io.raw.exists(io.key("q", added.id))).toBe(0);
    const gone = await added.waitUntilFinished(events, 5_000).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(JobNotFoundError);
    expect((gone as Error).message).toMatch(new RegExp(`job "${added.id}" in queue "q".*does not exist`));
  });

  it("a job removed on completion after the reader's last read: found through its event, not called gone", async () => {
    const io = peers("wuf");
    // Reads far apart: after the first one, the next comes only when a wait asks to catch up.
    const events = nimbusEvents(io, "q", { poll: { minMs: 20_000, maxMs: 20_000 } });
    await events.waitUntilReady();
    await sleep(100);
    const queue = new Queue("q", { redis: io.redis, prefix: io.prefix });
    const job = await queue.add("quick", { n: 9 }, { removeOnComplete: true });
    await new Worker("q", async () => "kept in the event", { redis: io.redis, prefix: io.prefix }).drain();
    expect(await io.raw.exists(io.key("q", job.id))).toBe(0);
    await expect(job.waitUntilFinished(events, 5_000)).resolves.toBe("kept in the event");
  });

  it("rejects after ttl with a TimeoutError naming the job and queue; 0 means no limit", async () => {
    const io = peers("wuf");
    const events = nimbusEvents(io, "q");
    const job = await io.queue("q").add("never-processed", {});
    const error = await job.waitUntilFinished(events, 200).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/job "1" in queue "q".*not finished within 200 ms/);
    // Its listeners are gone: nothing is left subscribed after the timeout.
    expect(events.listenerCount("completed:1")).toBe(0);
    expect(events.listenerCount("failed:1")).toBe(0);
    await expect(job.waitUntilFinished(events, -1)).rejects.toBeInstanceOf(ValidationError);
    const other = nimbusEvents(io, "other");
    await expect(job.waitUntilFinished(other)).rejects.toThrow(
      /queueEvents must be a QueueEvents of queue "q"/,
    );
  });

  it("rejects pending waits with a ClosedError when the QueueEvents closes", async () => {
    const io = peers("wuf");
    const events = nimbusEvents(io, "q");
    const job = await io.queue("q").add("never-processed", {});
    const waiting = job.waitUntilFinished(events).catch((error: unknown) => error);
    await events.waitUntilReady();
    await sleep(50);
    await events.close();
    expect(await waiting).toBeInstanceOf(ClosedError);
    await expect(job.waitUntilFinished(events)).rejects.toBeInstanceOf(ClosedError);
  });
});

describe("waitUntilFinished with nimbusq's Worker", () => {
  it("settles on nimbusq's completed and failed events (events final is enough)", async () => {
    const io = peers("wuf");
    const events = nimbusEvents(io, "q", { events: "final" });
    const queue = new Queue("q", { redis: io.redis, prefix: io.prefix, events: "final" });
    const ok = await queue.add("ok", { n: 7 });
    const bad = await queue.add("bad", { n: 8 }, { attempts: 2, backoff: 20 });
    const waits = [ok.waitUntilFinished(events, 10_000), bad.waitUntilFinished(events, 10_000)].map(outcome);
    const worker = nimbusWorker(
      io,
      "q",
      async (job) => {
        if (job.name === "bad") throw new Error(`nimbus failure ${job.attemptsMade}`);
        return { sum: (job.data as { n: number }).n + 1 };
      },
      { events: "final" },
    );
    runLoop(io, worker);
    expect(await Promise.all(waits)).toEqual([
      { resolved: { sum: 8 } },
      { rejected: "nimbus failure 1", name: "JobFailedError" },
    ]);
  });
});
