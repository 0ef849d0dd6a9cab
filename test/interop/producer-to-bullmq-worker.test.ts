/**
 * Jobs added by nimbusq over HTTP are taken by a real BullMQ 6.7.0 Worker in BullMQ's order, with the
 * data and options BullMQ decodes, and promptly: the marker wakes a worker blocked on it.
 */
import { describe, expect, it } from "vitest";
import type { JobsOptions } from "../../core/index.ts";
import { bullOpts, interopPeers, storedJob } from "../support/bullmq-peer.ts";

const peers = interopPeers();

describe("a real BullMQ Worker takes nimbusq's jobs in BullMQ's order", () => {
  it("FIFO for standard adds, single and bulk", async () => {
    const io = peers();
    const queue = io.queue("fifo");
    await queue.add("a", { n: 1 });
    await queue.addBulk([
      { name: "b", data: { n: 2 } },
      { name: "c", data: { n: 3 } },
    ]);
    await queue.add("d", { n: 4 });
    const { started } = io.worker("fifo");
    const seen = await started(4);
    expect(seen.map((s) => [s.id, s.name, s.data])).toEqual([
      ["1", "a", { n: 1 }],
      ["2", "b", { n: 2 }],
      ["3", "c", { n: 3 }],
      ["4", "d", { n: 4 }],
    ]);
  });

  it("LIFO jobs jump the line, newest first, exactly as BullMQ's own adds", async () => {
    const io = peers();
    const adds: [string, JobsOptions][] = [
      ["a1", {}],
      ["a2", {}],
      ["L1", { lifo: true }],
      ["a3", {}],
      ["L2", { lifo: true }],
    ];
    const nimbus = io.queue("lifo-n");
    for (const [name, opts] of adds) await nimbus.add(name, {}, opts);
    const bull = io.bullQueue("lifo-b");
    for (const [name, opts] of adds) await bull.add(name, {}, bullOpts(opts));
    const fromNimbus = await io.worker("lifo-n").started(5);
    const fromBull = await io.worker("lifo-b").started(5);
    expect(fromNimbus.map((s) => s.name)).toEqual(["L2", "L1", "a1", "a2", "a3"]);
    expect(fromNimbus.map((s) => s.name)).toEqual(fromBull.map((s) => s.name));
  });

  it("standard jobs before prioritized ones, lower priority first, FIFO within a priority", async () => {
    const io = peers();
    const queue = io.queue("prio");
    await queue.add("p5a", {}, { priority: 5 });
    await queue.add("std1", {});
    await queue.add("p1a", {}, { priority: 1 });
    await queue.addBulk([
      { name: "p5b", data: {}, opts: { priority: 5 } },
      { name: "p1b", data: {}, opts: { priority: 1 } },
      { name: "p2097151", data: {}, opts: { priority: 2_097_151 } },
    ]);
    await queue.add("std2", {}, { priority: 0 });
    const seen = await io.worker("prio").started(7);
    expect(seen.map((s) => s.name)).toEqual(["std1", "std2", "p1a", "p1b", "p5a", "p5b", "p2097151"]);
    expect(seen.map((s) => s.priority)).toEqual([0, 0, 1, 1, 5, 5, 2_097_151]);
  });

  it("delayed jobs run in due order and never before they are due (timestamp counts)", async () => {
    const io = peers();
    const { started, idle } = io.worker("later");
    await idle();
    const queue = io.queue("later");
    const now = Date.now();
    const jobs = [
      await queue.add("d800", {}, { delay: 800 }),
      await queue.add("d300", {}, { delay: 300 }),
      await queue.add("d550-prio", {}, { delay: 550, priority: 3 }),
      // Due at timestamp + delay: 200 ms ago + 600 ms.
      await queue.add("d600-from-the-past", {}, { delay: 600, timestamp: now - 200 }),
    ];
    const seen = await started(4);
    expect(seen.map((s) => s.name)).toEqual(["d300", "d600-from-the-past", "d550-prio", "d800"]);
    for (const s of seen) {
      const job = jobs.find((j) => j.name === s.name);
      const due = (job?.timestamp ?? 0) + (job?.delay ?? 0);
      expect(s.startedAt, s.name).toBeGreaterThanOrEqual(due);
      // The delay marker wakes the blocked worker at the due time, not at its 5 s drain timeout.
      expect(s.startedAt - due, s.name).toBeLessThan(150);
    }
    expect(seen.find((s) => s.name === "d600-from-the-past")?.timestamp).toBe(now - 200);
  });
});

describe("the marker wakes a blocked BullMQ Worker at once", () => {
  it("starts a standard, a prioritized, a lifo and a flow job woken by nimbusq's add, not by BullMQ's block timeout", async () => {
    const io = peers();
    const { started, idle } = io.worker("wake");
    // Warm up: the first call loads the script into Redis (NOSCRIPT, then EVAL) and opens the HTTP socket.
    await io.queue("warm-up").add("warm-up", {});
    await idle();
    const queue = io.queue("wake");
    const delays: Record<string, number> = {};
    const kinds: [string, () => Promise<unknown>][] = [
      ["standard", () => queue.add("standard", {})],
      ["prioritized", () => queue.add("prioritized", {}, { priority: 9 })],
      ["lifo", () => queue.add("lifo", {}, { lifo: true })],
      [
        "child",
        () =>
          io.flow().add({
            name: "parent",
            queueName: "wake-parents",
            children: [{ name: "child", queueName: "wake" }],
          }),
      ],
    ];
    for (const [i, [name, add]] of kinds.entries()) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 300)); // blocked again
      const before = Date.now();
      await add();
      const seen = await started(i + 1);
      expect(seen[i]?.name).toBe(name);
      delays[name] = (seen[i]?.startedAt ?? Number.POSITIVE_INFINITY) - before;
    }
    // A blocked BullMQ Worker waits up to its drainDelay (5 s) unless the marker wakes it: a start
    // well under that is the marker's doing (typically a few ms; over 100 ms on a loaded CI machine,
    // so the bound is a behaviour, not a timing).
    for (const [name, ms] of Object.entries(delays)) expect(ms, name).toBeLessThan(1000);
  });
});

describe("BullMQ decodes nimbusq's jobs as it decodes its own", () => {
  const now = Date.now();
  const cases: [string, JobsOptions][] = [
    ["plain", {}],
    ["retry-fixed", { attempts: 3, backoff: 1000 }],
    ["retry-exp", { attempts: 2, backoff: { type: "exponential", delay: 500, jitter: 0.5 } }],
    ["remove-true", { removeOnComplete: true, removeOnFail: false }],
    ["remove-count", { removeOnComplete: 10, removeOnFail: 3 }],
    ["remove-object", { removeOnComplete: { count: 5, age: 3600 }, removeOnFail: { age: 60, limit: 10 } }],
    ["lifo", { lifo: true }],
    ["priority", { priority: 7 }],
    ["delayed", { delay: 300 }],
    ["custom-id", { jobId: "custom-1" }],
    ["timestamp", { timestamp: now - 5000 }],
    ["dedup-simple", { deduplication: { id: "d1" } }],
    ["dedup-ttl-extend", { deduplication: { id: "d2", ttl: 5000, extend: true } }],
    ["dedup-replace", { deduplication: { id: "d3", ttl: 5000, replace: true }, delay: 300 }],
    ["misc", { stackTraceLimit: 5, keepLogs: 10, sizeLimit: 4096, attempts: 1 }],
  ];

  it("stores the same hash as BullMQ's Queue.add for every kind of option", async () => {
    const io = peers();
    const nimbus = io.queue("n");
    const bull = io.bullQueue("b");
    for (const [name, opts] of cases) {
      const data = { kind: name, list: [1, "two", { three: 3 }], nested: { ok: true } };
      const ours = await nimbus.add(name, data, opts);
      const theirs = await bull.add(name, data, bullOpts(opts));
      expect(ours.id, name).toBe(theirs.id);
      expect(await storedJob(io.raw, io.key("n", ours.id)), name).toEqual(
        await storedJob(io.raw, io.key("b", theirs.id as string)),
      );
    }
    expect(await io.raw.get(io.key("n", "id"))).toBe(await io.raw.get(io.key("b", "id")));
  });

  it("gives the processor the same data and opts (backoff expanded, short keys decoded)", async () => {
    const io = peers();
    const nimbus = io.queue("n");
    const bull = io.bullQueue("b");
    for (const [name, opts] of cases) {
      await nimbus.add(name, { kind: name }, opts);
      await bull.add(name, { kind: name }, bullOpts(opts));
    }
    const fromNimbus = await io.worker("n").started(cases.length);
    const fromBull = await io.worker("b").started(cases.length);
    const byName = (list: typeof fromNimbus) =>
      Object.fromEntries(
        list.map(({ startedAt: _, ...rest }) => [
          rest.name,
          // Each side stamps its own clock unless the job names a timestamp.
          { ...rest, timestamp: rest.name === "timestamp" ? rest.timestamp : "<ms>" },
        ]),
      );
    const ours = byName(fromNimbus);
    expect(ours).toEqual(byName(fromBull));
    expect(ours["retry-fixed"]?.opts.backoff).toEqual({ type: "fixed", delay: 1000 });
    expect(ours["retry-fixed"]?.opts.attempts).toBe(3);
    expect(ours.plain?.opts).toEqual({ attempts: 0 });
    expect(ours["dedup-ttl-extend"]?.opts.deduplication).toEqual({ id: "d2", ttl: 5000, extend: true });
    expect(ours["dedup-ttl-extend"]?.deduplicationId).toBe("d2");
    expect(ours.misc?.opts).toMatchObject({ keepLogs: 10, stackTraceLimit: 5, sizeLimit: 4096 });
    expect(ours.timestamp?.timestamp).toBe(now - 5000);
    expect(ours["custom-id"]?.id).toBe("custom-1");
    // Promotion resets the hash's delay to 0; the option stays.
    expect([ours.delayed?.delay, ours.delayed?.opts.delay]).toEqual([0, 300]);
  });
});
