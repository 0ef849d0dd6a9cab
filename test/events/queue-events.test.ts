/**
 * nimbusq's QueueEvents over the REST server, beside BullMQ 6.7.0's QueueEvents over TCP on the same
 * queue: the same events, in the same order, with the same arguments and stream ids — whether a real
 * BullMQ Queue and Worker or nimbusq's Queue and Worker write them.
 */
import { QueueEventsProducer } from "bullmq";
import { describe, expect, it } from "vitest";
import { Queue, QueueEvents, ValidationError } from "../../core/index.ts";
import { bullConnection, interopPeers, sleep, waitFor } from "../support/bullmq-peer.ts";
import { nimbusWorker, runLoop } from "../support/mixed-fleet.ts";
import {
  allEventNames,
  bullEvents,
  type Heard,
  newestId,
  nimbusEvents,
  record,
  through,
} from "../support/queue-events.ts";
import { sharedRedis } from "../support/stack.ts";

const peers = interopPeers();

/** Waits until both logs reach the stream's current end, then returns them cut there. */
async function bothThrough(io: ReturnType<typeof peers>, queue: string, nimbus: Heard[], bull: Heard[]) {
  const last = await newestId(io, queue);
  await waitFor(
    () => through(nimbus, last).length > 0 && through(bull, last).length > 0,
    `events up to ${last}`,
  );
  return { nimbus: through(nimbus, last), bull: through(bull, last) };
}

describe("QueueEvents hears a real BullMQ producer and Worker as BullMQ's QueueEvents does", () => {
  it("every event with BullMQ's payloads, order and ids; per-job events; custom events", async () => {
    const io = peers("qe");
    const custom = ["custom-thing"];
    const nimbus = nimbusEvents(io, "q", { lastEventId: "0-0" });
    const bull = bullEvents(io, "q");
    const nimbusLog = record(nimbus, [...allEventNames, ...custom]);
    const bullLog = record(bull, [...allEventNames, ...custom]);
    const nimbusPerJob = record(nimbus, ["completed:ok-1", "failed:bad-1", "progress:ok-1"]);
    const bullPerJob = record(bull, ["completed:ok-1", "failed:bad-1", "progress:ok-1"]);
    await Promise.all([nimbus.waitUntilReady(), bull.waitUntilReady()]);

    const queue = io.bullQueue("q");
    await queue.pause();
    await queue.resume();
    await queue.add("ok", { n: 1 }, { jobId: "ok-1" });
    await queue.add("ok", { n: 2 }, { jobId: "ok-1" }); // duplicated
    await queue.add("bad", {}, { jobId: "bad-1" });
    await queue.add("retried", {}, { attempts: 2, backoff: 100 });
    await queue.add("text", {});
    await queue.add("dedup", {}, { deduplication: { id: "d1" } });
    await queue.add("dedup", {}, { deduplication: { id: "d1" } }); // deduplicated
    const later = await queue.add("later", {}, { delay: 60_000 });
    await later.remove(); // removed, prev delayed
    await io.bullFlow().add({ name: "parent", queueName: "q", children: [{ name: "text", queueName: "q" }] });
    const producer = new QueueEventsProducer("q", { connection: bullConnection(), prefix: io.prefix });
    io.defer(() => producer.close());
    await producer.publishEvent({ eventName: "custom-thing", jobId: "c-1", detail: "any text" });

    io.worker("q", async (job) => {
      if (job.name === "ok") {
        await job.updateProgress(30);
        await job.updateProgress({ step: "half", pct: 50 });
        return { total: 42, items: ["a", "b"] };
      }
      if (job.name === "bad") throw new Error("broken on purpose");
      if (job.name === "retried" && job.attemptsMade === 0) throw new Error("not yet");
      return `plain ${job.name}`;
    });
    const count = (event: string) => bullLog.filter((heard) => heard.event === event).length;
    // ok-1, retried (2nd run), text, dedup, the child and its parent complete; bad-1 fails.
    await waitFor(() => count("completed") === 6 && count("failed") === 1, "the jobs to finish", 15_000);
    await queue.clean(0, 100, "completed"); // cleaned

    const logs = await bothThrough(io, "q", nimbusLog, bullLog);
    expect(logs.nimbus).toEqual(logs.bull);
    const seen = new Set(logs.nimbus.map((heard) => heard.event));
    for (const event of [
      "paused",
      "resumed",
      "added",
      "waiting",
      "duplicated",
      "deduplicated",
      "delayed",
      "removed",
      "waiting-children",
      "active",
      "progress",
      "completed",
      "failed",
      "retries-exhausted",
      "drained",
      "cleaned",
      "custom-thing",
    ])
      expect(seen, event).toContain(event);
    // The payload shapes BullMQ decodes: JSON progress and return values, a numeric delay, strings else.
    const args = (event: string) =>
      logs.nimbus.filter((heard) => heard.event === event).map((heard) => heard.args);
    expect(args("progress")).toEqual([
      { jobId: "ok-1", data: 30 },
      { jobId: "ok-1", data: { step: "half", pct: 50 } },
    ]);
    expect(args("completed")).toContainEqual({
      jobId: "ok-1",
      returnvalue: { total: 42, items: ["a", "b"] },
      prev: "active",
    });
    expect(args("failed")).toContainEqual({
      jobId: "bad-1",
      failedReason: "broken on purpose",
      prev: "active",
    });
    expect(args("retries-exhausted")).toContainEqual({ jobId: "bad-1", attemptsMade: "1" });
    expect(args("delayed").every((a) => typeof (a as { delay: unknown }).delay === "number")).toBe(true);
    expect(args("cleaned")).toEqual([{ count: expect.any(String) }]);
    expect(args("paused")).toEqual([{}]);
    expect(args("custom-thing")).toEqual([{ jobId: "c-1", detail: "any text" }]);
    expect(logs.nimbus.find((heard) => heard.event === "drained")?.id).toBeUndefined();
    // Per-job listeners got the same as BullMQ's.
    await waitFor(
      () => nimbusPerJob.length === bullPerJob.length && bullPerJob.length === 4,
      "per-job events",
    );
    expect(nimbusPerJob).toEqual(bullPerJob);
    expect(nimbus.lastEventId).toBe(logs.nimbus.at(-1)?.id ?? logs.nimbus.at(-1)?.args);
  });

  it("starts at the stream's end by default ($), and resumes after a saved lastEventId", async () => {
    const io = peers("qe");
    const queue = io.bullQueue("q");
    await queue.add("before", {});
    const first = nimbusEvents(io, "q");
    const firstLog = record(first, ["added"]);
    await first.waitUntilReady();
    await queue.add("after-1", {});
    await queue.add("after-2", {});
    await waitFor(() => firstLog.length === 2, "two added events");
    expect(firstLog.map((heard) => (heard.args as { name: string }).name)).toEqual(["after-1", "after-2"]);

    // A QueueEvents from the first's position hears only what came later.
    const saved = firstLog[0]?.id as string;
    const resumed = nimbusEvents(io, "q", { lastEventId: saved });
    const resumedLog = record(resumed, ["added"]);
    await queue.add("after-3", {});
    await waitFor(() => resumedLog.length === 2, "the resumed reader");
    expect(resumedLog.map((heard) => (heard.args as { name: string }).name)).toEqual(["after-2", "after-3"]);
    // An empty or missing stream starts from its beginning.
    const fresh = nimbusEvents(io, "empty");
    await fresh.waitUntilReady();
    expect(fresh.lastEventId).toBe("0-0");
  });
});

describe("QueueEvents hears nimbusq's own Worker", () => {
  for (const level of ["all", "final"] as const) {
    it(`as BullMQ's QueueEvents does (events ${level})`, async () => {
      const io = peers("qe");
      const nimbus = nimbusEvents(io, "q", { lastEventId: "0-0", events: level });
      const bull = bullEvents(io, "q");
      const nimbusLog = record(nimbus, allEventNames);
      const bullLog = record(bull, allEventNames);
      await Promise.all([nimbus.waitUntilReady(), bull.waitUntilReady()]);
      const queue = new Queue("q", { redis: io.redis, prefix: io.prefix, events: level });
      await queue.add("ok", { n: 1 });
      await queue.add("bad", {}, { attempts: 2, backoff: 50 });
      const worker = nimbusWorker(
        io,
        "q",
        async (job) => {
          await job.updateProgress(50);
          if (job.name === "bad") throw new Error(`bad ${job.attemptsMade}`);
          return { doubled: 2 };
        },
        { events: level },
      );
      runLoop(io, worker);
      await waitFor(
        () => bullLog.filter((heard) => heard.event === "failed").length === 1,
        "the failure",
        10_000,
      );
      await sleep(100);
      const logs = await bothThrough(io, "q", nimbusLog, bullLog);
      expect(logs.nimbus).toEqual(logs.bull);
      const events = logs.nimbus.map((heard) => heard.event);
      expect(events).toContain("completed");
      expect(events).toContain("retries-exhausted");
      if (level === "final")
        expect(new Set(events)).toEqual(new Set(["completed", "failed", "retries-exhausted"]));
      else
        expect(events).toEqual(expect.arrayContaining(["added", "waiting", "active", "progress", "delayed"]));
      expect(logs.nimbus.find((heard) => heard.event === "completed")?.args).toEqual({
        jobId: "1",
        returnvalue: { doubled: 2 },
        prev: "active",
      });
    });
  }
});

describe("QueueEvents refuses what cannot work, naming the option", () => {
  const redis = sharedRedis();
  const refused = (make: () => unknown, field: string, text: RegExp) => {
    let error: unknown;
    try {
      make();
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect((error as Error).message).toMatch(text);
  };

  it("events none (no event would ever come), bad ids, bad poll bounds, BullMQ's connection", () => {
    refused(() => new QueueEvents("q", { redis, events: "none" }), "events", /none.*never hear/);
    refused(
      () => new QueueEvents("q", { redis, events: "most" as "all" }),
      "events",
      /one of all, final, none/,
    );
    refused(() => new QueueEvents("q", { redis, lastEventId: "latest" }), "lastEventId", /stream id/);
    refused(() => new QueueEvents("q", { redis, poll: { minMs: 0 } }), "poll.minMs", /integer/);
    refused(
      () => new QueueEvents("q", { redis, poll: { minMs: 500, maxMs: 100 } }),
      "poll.maxMs",
      /from 500/,
    );
    refused(() => new QueueEvents("q", { redis, poll: { count: 0 } }), "poll.count", /integer/);
    refused(
      () => new QueueEvents("q", { connection: { host: "localhost" } } as unknown as { redis: typeof redis }),
      "connection",
      /createRedis/,
    );
    refused(() => new QueueEvents("q", undefined as unknown as { redis: typeof redis }), "options", /redis/);
    refused(() => new QueueEvents("", { redis }), "queueName", /.+/);
  });
});
