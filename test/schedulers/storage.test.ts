/**
 * upsertJobScheduler and its getters against the real REST server: BullMQ 6.7.0's storage (the
 * `repeat` ZSET, the `repeat:<id>` hash, the iteration job), replacing a pending iteration, removal,
 * and bad schedules refused with a ValidationError before anything is written.
 */
import type { Redis as IORedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { JobSchedulerConflictError, Queue, ValidationError } from "../../core/index.ts";
import { keysUnder, sharedConnection, sharedRedis, uniquePrefix } from "../support/stack.ts";

const raw: IORedis = sharedConnection();
afterAll(() => raw.disconnect());

function setup(clock?: () => number) {
  const prefix = uniquePrefix("sched");
  const queue = new Queue("reports", { redis: sharedRedis(), prefix, ...(clock ? { clock } : {}) });
  const key = (suffix: string) => `${prefix}:reports:${suffix}`;
  return { prefix, queue, key };
}

describe("upsertJobScheduler storage", () => {
  it("writes BullMQ's scheduler hash, repeat ZSET entry and iteration job (every)", async () => {
    const now = Date.now();
    const { queue, key } = setup(() => now);
    const job = await queue.upsertJobScheduler(
      "tick",
      { every: 60_000 },
      { name: "tick-job", data: { x: 1 }, opts: { attempts: 1 } },
    );
    expect(job?.id).toBe(`repeat:tick:${now}`);
    expect(job?.scheduledAt).toBe(now);
    expect(await raw.zrange(key("repeat"), 0, -1, "WITHSCORES")).toEqual(["tick", String(now)]);
    expect(await raw.hgetall(key("repeat:tick"))).toEqual({
      name: "tick-job",
      every: "60000",
      offset: String(now % 60_000),
      opts: '{"attempts":1}',
      data: '{"x":1}',
      ic: "1",
    });
    const iteration = await raw.hgetall(key(`repeat:tick:${now}`));
    expect({ ...iteration, opts: JSON.parse(iteration.opts as string) }).toEqual({
      rjk: "tick",
      name: "tick-job",
      data: '{"x":1}',
      timestamp: String(now),
      delay: "0",
      priority: "0",
      opts: {
        attempts: 1,
        repeat: { every: 60_000, count: 1 },
        timestamp: now,
        repeatJobKey: "tick",
        jobId: `repeat:tick:${now}`,
        delay: 0,
      },
    });
    expect(await raw.lrange(key("wait"), 0, -1)).toEqual([`repeat:tick:${now}`]);
    expect(await raw.get(key("id"))).toBe("1");
  });

  it("stores a cron schedule's first run with prevMillis, delayed, and offset 0 (as BullMQ)", async () => {
    const now = Date.parse("2026-12-31T20:00:00Z");
    const { queue, key } = setup(() => now);
    const next = Date.parse("2027-01-01T00:00:00Z");
    const job = await queue.upsertJobScheduler(
      "yearly",
      { pattern: "0 0 1 1 *", tz: "UTC", limit: 5 },
      { data: { y: 2 } },
    );
    expect(job).toMatchObject({ id: `repeat:yearly:${next}`, name: "yearly", delay: next - now });
    expect(await raw.hgetall(key("repeat:yearly"))).toEqual({
      name: "yearly",
      tz: "UTC",
      limit: "5",
      pattern: "0 0 1 1 *",
      offset: "0",
      data: '{"y":2}',
      ic: "1",
    });
    const opts = JSON.parse((await raw.hget(key(`repeat:yearly:${next}`), "opts")) as string);
    expect(opts).toEqual({
      repeat: { pattern: "0 0 1 1 *", tz: "UTC", limit: 5, count: 1 },
      timestamp: now,
      prevMillis: next,
      repeatJobKey: "yearly",
      jobId: `repeat:yearly:${next}`,
      delay: next - now,
    });
    expect(await raw.zrange(key("delayed"), 0, -1, "WITHSCORES")).toEqual([
      `repeat:yearly:${next}`,
      String(next * 4096),
    ]);
    expect(await raw.zscore(key("marker"), "1")).toBe(String(next));
  });

  it("replaces a pending iteration: an `every` one keeps its millis, `ic` survives", async () => {
    // 2 s past a 5 s slot boundary, so the first run (offset 1 s) is 4 s away and stays delayed.
    let now = Math.floor(Date.now() / 5000) * 5000 + 2000;
    const { queue, key } = setup(() => now);
    await queue.upsertJobScheduler("tick", { every: 5000, offset: 1000 }, { data: { v: 1 } });
    const [first] = await raw.zrange(key("delayed"), 0, -1);
    await raw.hset(key("repeat:tick"), "ic", "7");
    now += 100;
    const again = await queue.upsertJobScheduler("tick", { every: 5000, offset: 1000 }, { data: { v: 2 } });
    expect(again?.id).toBe(first);
    expect(await raw.zcard(key("delayed"))).toBe(1);
    expect(await raw.hget(key(first as string), "data")).toBe('{"v":2}');
    expect(await raw.hget(key("repeat:tick"), "ic")).toBe("7");
    // A new interval times the schedule afresh: without an offset, the first run is now.
    const changed = await queue.upsertJobScheduler("tick", { every: 7000 });
    expect(changed?.id).toBe(`repeat:tick:${now}`);
    expect(await raw.zcard(key("delayed"))).toBe(0);
    expect(await raw.lrange(key("wait"), 0, -1)).toEqual([changed?.id]);
    expect(await raw.exists(key(first as string))).toBe(0);
    expect(await raw.hget(key("repeat:tick"), "data")).toBe(null);
  });

  it("replaces a pending iteration that waits in wait, taking it out once among other jobs", async () => {
    const now = Date.now();
    const { queue, key } = setup(() => now);
    await queue.add("before", {}, { timestamp: now - 1000 });
    const first = await queue.upsertJobScheduler("tick", { every: 7000 }, { data: { v: 1 } });
    await queue.add("after", {}, { timestamp: now + 1000 });
    const again = await queue.upsertJobScheduler("tick", { every: 7000 }, { data: { v: 2 } });
    expect(again?.id).toBe(first?.id);
    expect(await raw.lrange(key("wait"), 0, -1)).toEqual([first?.id, "3", "1"]);
    expect(await raw.hget(key(first?.id as string), "data")).toBe('{"v":2}');
  });

  it("reads schedulers back as BullMQ's getters shape them, and removes them", async () => {
    const { queue, key } = setup();
    await queue.upsertJobScheduler(
      "a",
      { every: 1000 },
      { name: "n", data: { d: 1 }, opts: { priority: 3 } },
    );
    await queue.upsertJobScheduler("b", { pattern: "0 0 1 1 *", tz: "Europe/Berlin" });
    const b = await queue.getJobScheduler("b");
    expect(b).toEqual({
      key: "b",
      name: "b",
      next: Date.parse("2026-12-31T23:00:00Z"),
      iterationCount: 1,
      tz: "Europe/Berlin",
      pattern: "0 0 1 1 *",
      offset: 0,
    });
    const a = await queue.getJobScheduler("a");
    expect(a).toMatchObject({
      key: "a",
      name: "n",
      every: 1000,
      template: { data: { d: 1 }, opts: { priority: 3 } },
    });
    expect((await queue.getJobSchedulers()).map((s) => s.key)).toEqual(["b", "a"]);
    expect((await queue.getJobSchedulers(0, 0, true)).map((s) => s.key)).toEqual(["a"]);
    expect(await queue.getJobSchedulersCount()).toBe(2);
    expect(await queue.getJobScheduler("none")).toBeUndefined();

    expect(await queue.removeJobScheduler("b")).toBe(true);
    expect(await queue.removeJobScheduler("b")).toBe(false);
    expect(await raw.exists(key("repeat:b"))).toBe(0);
    expect(await raw.zcard(key("delayed"))).toBe(0);
    const events = await raw.xrange(key("events"), "-", "+");
    expect(events.at(-1)?.[1]).toEqual([
      "event",
      "removed",
      "jobId",
      `repeat:b:${b?.next}`,
      "prev",
      "delayed",
    ]);
    // An iteration already waiting is left to run (BullMQ removes only a delayed one).
    expect(await queue.removeJobScheduler("a")).toBe(true);
    expect(await raw.zcard(key("prioritized"))).toBe(1);
  });

  it("never overwrites an existing job with an iteration id", async () => {
    const now = Date.parse("2026-12-31T20:00:00Z");
    const { queue, key } = setup(() => now);
    const next = Date.parse("2027-01-01T00:00:00Z");
    await raw.hset(key(`repeat:y:${next}`), "name", "someone-else", "finishedOn", "1");
    await expect(queue.upsertJobScheduler("y", { pattern: "0 0 1 1 *" })).rejects.toThrow(
      JobSchedulerConflictError,
    );
    expect(await raw.exists(key("repeat:y"), key("repeat"))).toBe(0);
    expect(await raw.hgetall(key(`repeat:y:${next}`))).toEqual({ name: "someone-else", finishedOn: "1" });
    // An `every` schedule moves on to the next free slot, as BullMQ does.
    await raw.hset(key(`repeat:e:${now}`), "name", "old", "finishedOn", "1");
    expect((await queue.upsertJobScheduler("e", { every: 1000 }))?.id).toBe(`repeat:e:${now + 1000}`);
  });
});

describe("bad schedules", () => {
  const bad: [string, unknown, unknown, string][] = [
    ["invalid cron", "s", { pattern: "61 * * * *" }, "repeat.pattern"],
    ["unknown time zone", "s", { pattern: "0 * * * *", tz: "Mars/Olympus_Mons" }, "repeat.tz"],
    ["pattern and every", "s", { pattern: "0 * * * *", every: 1000 }, "repeat.every"],
    ["neither pattern nor every", "s", { limit: 3 }, "repeat.pattern"],
    ["every of 0", "s", { every: 0 }, "repeat.every"],
    ["negative every", "s", { every: -5 }, "repeat.every"],
    [
      "endDate before startDate",
      "s",
      { every: 1000, startDate: "2030-01-02", endDate: "2030-01-01" },
      "repeat.endDate",
    ],
    ["endDate in the past", "s", { every: 1000, endDate: Date.now() - 1000 }, "repeat.endDate"],
    ["unknown repeat key", "s", { every: 1000, cron: "x" }, "repeat.cron"],
    ["empty id", "", { every: 1000 }, "id"],
    ["id with a colon", "a:b", { every: 1000 }, "id"],
    ["id not a string", 42, { every: 1000 }, "id"],
    ["template delay", "s", { every: 1000 }, "template.opts.delay"],
  ];
  it.each(bad)("refuses %s, naming the field, and writes nothing", async (_what, id, repeat, field) => {
    const { queue, prefix } = setup();
    const template = field === "template.opts.delay" ? { opts: { delay: 10 } } : undefined;
    const error = await queue
      .upsertJobScheduler(id as string, repeat as { every: number }, template as undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect(await keysUnder(raw, prefix)).toEqual([]);
  });
});
