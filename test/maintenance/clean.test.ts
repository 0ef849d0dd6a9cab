/**
 * `Queue.clean` against the judge: the same history in two queues, one cleaned by bullmq@6.7.0 and the
 * other by nimbusq, must end up the same (structures, hashes, parents, dedup windows, events); then
 * what BullMQ cannot show — steps past 1,000 jobs, one `cleaned` event, replays — and bad input.
 */
import { describe, expect, it } from "vitest";
import { FlowProducer, toRedisPort, ValidationError, Worker } from "../../core/index.ts";
import { cleanJobs, decodeCleanJobs } from "../../core/redis/generated/scripts.ts";
import { queueKeyPrefix, queueKeys } from "../../core/redis/keys.ts";
import { runScript } from "../../core/redis/scripts.ts";
import { keysUnder, sharedRedis, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import {
  direct,
  eventsSince,
  lastEventId,
  picture,
  pictures,
  sameJobs,
  sides,
  twins,
  useTwins,
} from "../support/twin-queues.ts";

useTwins();

const hour = 3_600_000;

/** Moves a finished job's clock back by `age` ms on both sides (its score and finishedOn). */
async function age(prefix: string, set: "completed" | "failed", id: string, finishedOn: number) {
  for (const side of sides) {
    await direct.zadd(`${prefix}:${side}:${set}`, finishedOn, id);
    await direct.hset(`${prefix}:${side}:${id}`, "finishedOn", finishedOn);
  }
}

describe("Queue.clean does what BullMQ's clean does", () => {
  it("cleans finished jobs past the grace period, oldest first, up to the limit", async () => {
    const t = twins();
    const now = Date.now();
    await sameJobs(t, async (queue, side) => {
      await queue.addBulk(["a", "b", "c", "d", "e", "f"].map((name) => ({ name, data: { name } })));
      await new Worker(
        side,
        async (job) => {
          if (job.name === "e" || job.name === "f") throw new Error("no");
          return job.name;
        },
        { redis: sharedRedis(), prefix: t.prefix },
      ).drain();
    });
    for (const [id, when] of [
      ["1", now - 5 * hour],
      ["2", now - 3 * hour],
      ["3", now - 2 * hour],
    ] as const)
      await age(t.prefix, "completed", id, when);
    await age(t.prefix, "failed", "5", now - 4 * hour);
    const since = { b: await lastEventId(t.prefix, "b"), n: await lastEventId(t.prefix, "n") };

    const theirs = await t.bull("b").clean(hour, 2, "completed");
    const ours = await t.queue("n").clean(hour, 2, "completed");
    expect(ours).toEqual(theirs);
    expect(ours).toEqual(["1", "2"]);
    expect(await t.bull("b").clean(hour, 0, "failed")).toEqual(await t.queue("n").clean(hour, 0, "failed"));

    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect(n.completed).toEqual(["3", "4"]);
    expect(n.failed).toEqual(["6"]);
    expect(n).not.toHaveProperty("1");
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual(await eventsSince(t.prefix, "b", since.b));
    expect(await eventsSince(t.prefix, "n", since.n)).toEqual([
      ["event", "cleaned", "count", "2"],
      ["event", "cleaned", "count", "1"],
    ]);
  });

  it("cleans wait, delayed and prioritized by creation time, skipping a scheduler's current iteration", async () => {
    const t = twins();
    const now = Date.now();
    const old = now - 5 * hour;
    await sameJobs(t, async (queue) => {
      await queue.add("old", {}, { timestamp: old });
      await queue.add("young", {}, { timestamp: now });
      await queue.add("old-later", {}, { timestamp: old, delay: 5 * hour });
      await queue.add("young-later", {}, { timestamp: now, delay: hour });
      await queue.add("old-urgent", {}, { timestamp: old, priority: 3 });
      await queue.add("young-urgent", {}, { timestamp: now, priority: 3 });
      // The iteration is due now but was planned long ago: clean must leave it to its scheduler.
      const past = () => old;
      await t.queue(queue.name, past).upsertJobScheduler("tick", { every: 60_000 }, { data: { t: 1 } });
    });
    for (const state of ["wait", "delayed", "prioritized"] as const) {
      const theirs = await t.bull("b").clean(hour, 0, state);
      expect(await t.queue("n").clean(hour, 0, state)).toEqual(theirs);
    }
    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect(n.wait).toEqual(expect.arrayContaining(["2", `repeat:tick:${old}`]));
    expect((n.delayed as string[]).filter((_, i) => i % 2 === 0)).toEqual(["4"]);
    expect((n.prioritized as string[]).filter((_, i) => i % 2 === 0)).toEqual(["6"]);
  });

  it("cleans active jobs no worker holds, by their last processing time", async () => {
    const t = twins();
    const old = Date.now() - 5 * hour;
    await sameJobs(t, async (queue, side) => {
      await queue.addBulk([1, 2, 3].map((n) => ({ name: `j${n}`, data: {}, opts: { timestamp: old } })));
      for (let i = 0; i < 3; i++) await direct.rpoplpush(t.key(side, "wait"), t.key(side, "active"));
      await direct.set(t.key(side, "2:lock"), "someone", "PX", 60_000);
      await direct.hset(t.key(side, "3"), "processedOn", Date.now());
    });
    const theirs = await t.bull("b").clean(hour, 0, "active");
    expect(await t.queue("n").clean(hour, 0, "active")).toEqual(theirs);
    expect(theirs).toEqual(["1"]);
    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
  });

  it("deletes a parent in the same queue left with nothing pending, and frees one in another queue without an event", async () => {
    const t = twins();
    const old = Date.now() - 5 * hour;
    const flows = new FlowProducer({ redis: sharedRedis(), prefix: t.prefix });
    for (const side of sides) {
      await flows.add({
        name: "home",
        queueName: side,
        opts: { jobId: "home" },
        children: [{ name: "kid", queueName: side, opts: { jobId: "kid-1", timestamp: old } }],
      });
      await flows.add({
        name: "away",
        queueName: `${side}-parents`,
        opts: { jobId: "away" },
        children: [{ name: "kid", queueName: side, opts: { jobId: "kid-2", timestamp: old } }],
      });
      await t.queue(side).add("owner", {}, { deduplication: { id: "d" }, timestamp: old });
    }
    const since = await lastEventId(t.prefix, "n-parents");
    const theirs = await t.bull("b").clean(hour, 0, "wait");
    expect((await t.queue("n").clean(hour, 0, "wait")).sort()).toEqual([...theirs].sort());
    const [b, n] = await pictures(t);
    expect(n).toEqual(b);
    expect(n).not.toHaveProperty("home");
    expect(n).not.toHaveProperty("de:d");
    expect(await picture(t.prefix, "n-parents", "n")).toEqual(await picture(t.prefix, "b-parents", "b"));
    expect(await direct.lrange(t.key("n-parents", "wait"), 0, -1)).toEqual(["away"]);
    expect(await eventsSince(t.prefix, "n-parents", since)).toEqual([]);
  });
});

describe("Queue.clean in steps", () => {
  it("cleans thousands of jobs in bounded steps with one cleaned event, keeping young ones scattered among them", async () => {
    const t = twins("big");
    const queue = t.queue("n");
    const old = Date.now() - 5 * hour;
    const jobs = Array.from({ length: 2600 }, (_, i) => ({
      name: "j",
      data: {},
      opts: i % 7 === 3 ? { lifo: true } : { timestamp: old },
    }));
    for (let i = 0; i < jobs.length; i += 1000) await queue.addBulk(jobs.slice(i, i + 1000));
    const young = jobs.filter((job) => job.opts.lifo).length;
    const since = await lastEventId(t.prefix, "n");

    const limited = await queue.clean(hour, 1500, "wait");
    expect(limited).toHaveLength(1500);
    // Oldest first: the right end of wait, apart from the young jobs pushed there.
    expect(limited.slice(0, 3)).toEqual(["1", "2", "3"]);
    const rest = await queue.clean(hour, 0, "waiting");
    expect(rest).toHaveLength(2600 - young - 1500);
    // The later steps take their deletions out from the left end, the nearer one: the young jobs stay
    // in their order.
    const youngIds = jobs.flatMap((job, i) => (job.opts.lifo ? [String(i + 1)] : []));
    expect(await direct.lrange(t.key("n", "wait"), 0, -1)).toEqual(youngIds);
    expect(await eventsSince(t.prefix, "n", since)).toEqual([
      ["event", "cleaned", "count", "1500"],
      ["event", "cleaned", "count", String(2600 - young - 1500)],
    ]);
    expect(await direct.exists(t.key("n", "1"))).toBe(0);
  });

  it("deletes fewer jobs in a step that must walk far into a list to take them out (cap)", async () => {
    const prefix = uniquePrefix("walk");
    const p = `${prefix}:n:`;
    const now = Date.now();
    // 1,200 young jobs on the right of wait, 600 old ones, 2,400 young on the left.
    const ids = Array.from({ length: 4200 }, (_, i) => String(i + 1));
    const isOld = (id: string) => Number(id) > 1200 && Number(id) <= 1800;
    const pipe = direct.pipeline();
    for (const id of ids) pipe.hset(`${p}${id}`, "timestamp", isOld(id) ? now - 5 * hour : now);
    await pipe.exec();
    await direct.lpush(`${p}wait`, ...ids);
    const keys = queueKeys(prefix, "n");
    const step = (offset: number, cap: number, n: number) =>
      runScript(
        toRedisPort(sharedRedis()),
        cleanJobs,
        { source: keys.wait, schedulers: keys.repeat, events: keys.events, replayGuard: `${p}guard:${n}` },
        {
          prefix: queueKeyPrefix(prefix, "n"),
          state: "wait",
          cutoff: now - hour,
          offset,
          take: 600,
          budget: 600,
          cap,
          limit: 0,
          total: 0,
          emit: "",
          listIds: "",
          guardTtl: 60_000,
        },
      ).then(decodeCleanJobs);
    // Two steps keep the young jobs on the right (they delete nothing, so walk nothing).
    expect(await step(0, 40, 1)).toEqual({ finished: 0, kept: 600, deleted: 0, ids: [] });
    expect(await step(600, 40, 2)).toEqual({ finished: 0, kept: 600, deleted: 0, ids: [] });
    // Its window lies 1,200 to 1,800 entries from the right end and 2,400 to 3,000 from the left:
    // taking a job out walks up to 1,800 entries from the right, 15 units of a cap of 60, so the step
    // stops at 45 units of its own work: 15 deletions.
    const walking = [];
    for (let n = 3; n < 8; n++) walking.push((await step(1200, 60, n)).deleted);
    expect(walking).toEqual([15, 15, 15, 15, 15]);
    // Where the walk takes the whole cap, a step still deletes 10 jobs (30 units).
    expect((await step(1200, 10, 8)).deleted).toBe(10);
    // With room for the walk, a step deletes up to its budget (200 jobs).
    expect((await step(1200, 3300, 9)).deleted).toBe(200);
    let offset = 1200;
    for (let n = 10; n < 20; n++) {
      const answer = await step(offset, 3300, n);
      offset += answer.kept;
      if (answer.finished) break;
    }
    expect(await direct.lrange(`${p}wait`, 0, -1)).toEqual(ids.filter((id) => !isOld(id)).reverse());
    expect(await direct.exists(`${p}1500`)).toBe(0);
  });

  it("answers a replayed step with its first answer, writing one cleaned event", async () => {
    const stack = await startPrivateStack();
    try {
      const prefix = uniquePrefix();
      const { Queue } = await import("../../core/index.ts");
      const queue = new Queue("n", { redis: stack.redis, prefix });
      await queue.addBulk([1, 2, 3].map(() => ({ name: "x", data: {}, opts: { timestamp: 1 } })));
      stack.rest.setFault({ kind: "drop-after", times: 1, command: "evalsha" });
      expect(await queue.clean(0, 0, "wait")).toEqual(["1", "2", "3"]);
      const events = await stack.direct.xrange(`${prefix}:n:events`, "-", "+");
      expect(events.filter(([, f]) => f[1] === "cleaned")).toEqual([
        [expect.any(String), ["event", "cleaned", "count", "3"]],
      ]);
    } finally {
      await stack.stop();
    }
  });
});

describe("Queue.clean's arguments", () => {
  it("refuses bad arguments with a ValidationError naming the field, writing nothing", async () => {
    const t = twins();
    const queue = t.queue("n");
    await queue.add("x", {}, { timestamp: 1 });
    const before = await keysUnder(direct, t.prefix);
    const bad: [unknown, unknown, unknown, string][] = [
      [-1, 0, "wait", "grace"],
      ["1", 0, "wait", "grace"],
      [0, 1.5, "wait", "limit"],
      [0, -2, "wait", "limit"],
      [0, 0, "waiting-children", "state"],
      [0, 0, "toString", "state"],
    ];
    for (const [grace, limit, state, field] of bad) {
      const call = queue.clean(grace as number, limit as number, state as "wait");
      await expect(call).rejects.toBeInstanceOf(ValidationError);
      await expect(call).rejects.toMatchObject({ field });
    }
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
    expect(await direct.llen(t.key("n", "wait"))).toBe(1);
  });
});
