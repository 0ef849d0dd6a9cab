/**
 * The events level a queue's producers and workers share: "all" writes BullMQ's events, "final" only
 * completed / failed / retries-exhausted, "none" nothing — and bad values are refused up front.
 */
import { describe, expect, it } from "vitest";
import { type EventsLevel, Queue, ValidationError, Worker } from "../../core/index.ts";
import { eventsFromEnv } from "../../functions/config/events-env.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

async function streamAfter(events: EventsLevel): Promise<string[]> {
  const prefix = uniquePrefix();
  const redis = sharedRedis();
  const queue = new Queue("q", { redis, prefix, events });
  await queue.addBulk([
    { name: "ok", data: {} },
    { name: "retry", data: {}, opts: { attempts: 2 } },
  ]);
  const worker = new Worker(
    "q",
    async (job) => {
      await job.updateProgress(50);
      if (job.name === "retry") throw new Error("no");
      return "done";
    },
    { redis, prefix, events },
  );
  const summary = await worker.drain();
  expect(summary).toMatchObject({ completed: 1, failed: 1, retried: 1 });
  await queue.add("later", {}, { delay: 60_000 });
  return (await direct.xrange(`${prefix}:q:events`, "-", "+")).map(([, fields]) => fields[1] as string);
}

describe("events level", () => {
  it("all: BullMQ's events for adds, leases, progress, retries, finishes and the drained queue", async () => {
    const events = await streamAfter("all");
    for (const name of [
      "progress",
      "added",
      "waiting",
      "delayed",
      "active",
      "completed",
      "failed",
      "retries-exhausted",
      "drained",
    ])
      expect(events).toContain(name);
  });

  it("final: only completed, failed and retries-exhausted", async () => {
    const events = await streamAfter("final");
    expect(new Set(events)).toEqual(new Set(["completed", "failed", "retries-exhausted"]));
    expect(events.filter((e) => e === "completed")).toHaveLength(1);
    expect(events.filter((e) => e === "failed")).toHaveLength(1);
  });

  it("none: no event at all", async () => {
    expect(await streamAfter("none")).toEqual([]);
  });

  it("refuses a level it does not know, in core and in the functions' environment", async () => {
    const redis = sharedRedis();
    expect(() => new Worker("q", async () => 1, { redis, events: "some" as EventsLevel })).toThrow(
      ValidationError,
    );
    await expect(new Queue("q", { redis, events: "most" as EventsLevel }).add("x", {})).rejects.toThrow(
      /events must be one of all, final, none/,
    );
    expect(eventsFromEnv({ NIMBUSQ_EVENTS: "final" })).toBe("final");
    expect(eventsFromEnv({})).toBeUndefined();
    expect(() => eventsFromEnv({ NIMBUSQ_EVENTS: "verbose" })).toThrow(
      /NIMBUSQ_EVENTS must be one of all, final, none/,
    );
  });
});
