/**
 * The sweeper as the schedulers' safety net: a due iteration that went missing comes back (once,
 * under its own id), one that may have been a schedule's last does not, and checking costs an idle
 * queue nothing. Billed commands are counted on a private stack; the measured costs are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue, toRedisPort, Worker } from "../../core/index.ts";
import { restoreIterations } from "../../core/schedulers/scheduler-iterations.ts";
import { sweep } from "../../core/sweeper/sweep.ts";
import { overRest, type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

function setup() {
  const prefix = uniquePrefix("sw");
  const key = (suffix: string) => `${prefix}:q:${suffix}`;
  const sweepAt = (now: number, queues = ["q"]) =>
    sweep({
      port: toRedisPort(stack.redis),
      prefix,
      queues,
      token: crypto.randomUUID(),
      lockTtlMs: 1000,
      now,
      stalledInterval: 30_000,
      maxStalledCount: 1,
      promoteLimit: 1000,
      eventBatch: 0,
      recheckMs: 60_000,
    }).then(async (result) => {
      await stack.direct.del(`${prefix}:nq:sweeper:lock`);
      if (result.locked) throw new Error("locked");
      return result.queues;
    });
  const queue = (clock?: () => number) =>
    new Queue("q", { redis: stack.redis, prefix, ...(clock ? { clock } : {}) });
  return { prefix, key, sweepAt, queue };
}

describe("the sweeper's scheduler check", () => {
  it("makes a removed due iteration again, under its own id, once; the schedule then goes on", async () => {
    const { key, sweepAt, queue, prefix } = setup();
    const now = Date.now();
    const first = await queue(() => now).upsertJobScheduler("tick", { every: 60_000 }, { data: { d: 1 } });
    // Lost by some accident: job.remove() refuses a scheduler's current iteration, as BullMQ's does.
    const lost = first?.id as string;
    await stack.direct.multi().del(key(lost)).lrem(key("wait"), 0, lost).zrem(key("delayed"), lost).exec();
    expect(await stack.direct.exists(key(first?.id as string))).toBe(0);

    const [swept] = await sweepAt(now + 1000);
    expect(swept?.restored).toEqual([first?.id]);
    expect(swept?.waiting).toBe(1);
    expect(await stack.direct.lrange(key("wait"), 0, -1)).toEqual([first?.id]);
    const restored = await stack.direct.hgetall(key(first?.id as string));
    expect(restored).toMatchObject({ rjk: "tick", name: "tick", data: '{"d":1}', delay: "0" });
    expect(JSON.parse(restored.opts as string)).toMatchObject({ repeat: { every: 60_000, count: 1 } });
    expect(await stack.direct.hget(key("repeat:tick"), "ic")).toBe("1");

    // A second (late or duplicated) pass, or a late repair call, makes nothing.
    expect((await sweepAt(now + 2000))[0]?.restored).toEqual([]);
    const hash = (await stack.direct.hgetall(key("repeat:tick"))) as Record<string, string>;
    const again = await restoreIterations(
      toRedisPort(stack.redis),
      prefix,
      "q",
      [{ schedulerId: "tick", millis: String(now), hash: Object.entries(hash).flat() }],
      now + 3000,
    );
    expect(again).toEqual([]);

    const ran: (number | undefined)[] = [];
    await new Worker("q", async (job) => ran.push(job.scheduledAt), { redis: stack.redis, prefix }).drain();
    expect(ran).toEqual([now]);
    expect(await stack.direct.zscore(key("repeat"), "tick")).toBe(String(now + 60_000));
  });

  it("leaves alone an iteration that may have been the last: at the limit, or no run left before endDate", async () => {
    const { key, sweepAt, queue } = setup();
    const hour = Date.parse("2027-01-05T10:00:00Z");
    const clock = () => hour - 60_000;
    await queue(clock).upsertJobScheduler("once", { every: 3_600_000, limit: 1, startDate: hour });
    await queue(clock).upsertJobScheduler("ending", { pattern: "0 * * * *", endDate: hour + 1_800_000 });
    await queue(clock).upsertJobScheduler("going", { pattern: "0 * * * *", endDate: hour + 7_200_000 });
    for (const id of ["once", "ending", "going"]) {
      await stack.direct.del(key(`repeat:${id}:${hour}`));
      await stack.direct.zrem(key("delayed"), `repeat:${id}:${hour}`);
    }
    const [swept] = await sweepAt(hour + 5000);
    expect(swept?.restored).toEqual([`repeat:going:${hour}`]);
    expect(await stack.direct.exists(key(`repeat:once:${hour}`), key(`repeat:ending:${hour}`))).toBe(0);
    // Long past the lookback, a missing iteration is no longer looked for.
    await stack.direct.del(key(`repeat:going:${hour}`));
    await stack.direct.lrem(key("wait"), 0, `repeat:going:${hour}`);
    expect((await sweepAt(hour + 3_600_000))[0]?.restored).toEqual([]);
  });

  it("reports the next scheduler run only while it is still to come", async () => {
    const { sweepAt, queue } = setup();
    const now = Date.now();
    await queue(() => now).upsertJobScheduler("later", { every: 60_000, startDate: now + 30_000 });
    expect((await sweepAt(now))[0]?.nextSchedulerAt).toBe(now + 30_000);
    expect((await sweepAt(now + 40_000))[0]?.nextSchedulerAt).toBeUndefined();
  });
});

// Billed commands are the REST server's count.
describe.skipIf(!overRest())("costs (billed commands)", () => {
  it("an idle queue pays nothing for the check; a due scheduler one EXISTS a pass", async () => {
    const now = Date.now();
    const billed = async (run: () => Promise<unknown>) => {
      stack.rest.resetStats();
      await run();
      return stack.rest.stats().billed;
    };
    const idle = setup();
    const idleCost = await billed(() => idle.sweepAt(now));
    const future = setup();
    await future.queue(() => now).upsertJobScheduler("later", { every: 60_000, startDate: now + 30_000 });
    const futureCost = await billed(() => future.sweepAt(now));
    expect(futureCost).toBe(idleCost);

    const plain = setup();
    await plain.queue(() => now).add("plain", {});
    const plainCost = await billed(() => plain.sweepAt(now + 1000));
    const due = setup();
    await due.queue(() => now).upsertJobScheduler("tick", { every: 60_000 });
    const dueCost = await billed(() => due.sweepAt(now + 1000));
    expect(dueCost).toBe(plainCost + 1);
    console.log(
      JSON.stringify({ sweepIdle: idleCost, sweepWaitingJob: plainCost, sweepDueScheduler: dueCost }),
    );
  });

  it("measures an upsert and the next iteration a lease makes", async () => {
    const { queue, prefix } = setup();
    const q = queue();
    const billed = async (run: () => Promise<unknown>) => {
      stack.rest.resetStats();
      await run();
      return stack.rest.stats().billed;
    };
    const worker = new Worker("q", async () => undefined, { redis: stack.redis, prefix, batchSize: 1 });
    // Warm the script cache (a first EVALSHA answers NOSCRIPT), then measure.
    await q.upsertJobScheduler("warm", { every: 60_000 });
    await worker.drain();
    const upsertEvery = await billed(() => q.upsertJobScheduler("tick", { every: 60_000 }));
    const drainIteration = await billed(() => worker.drain());
    const upsertCron = await billed(() => q.upsertJobScheduler("cron", { pattern: "0 * * * *" }));
    const replaceCron = await billed(() => q.upsertJobScheduler("cron", { pattern: "0 * * * *" }));
    await q.add("plain", {});
    const drainPlain = await billed(() => worker.drain());
    const costs = { upsertEvery, upsertCron, replaceCron, drainIteration, drainPlain };
    console.log(JSON.stringify({ ...costs, nextIteration: drainIteration - drainPlain }));
    expect(drainIteration - drainPlain).toBeLessThanOrEqual(15);
  });
});
