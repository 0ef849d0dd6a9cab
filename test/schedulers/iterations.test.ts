/**
 * Iterations after the first, made by nimbusq's worker when it takes the current one (before the
 * processor runs, one call per batch): at the right millis, across a daylight-saving change with
 * injected clocks, stopping at `limit`/`endDate`, never twice for one millis, and with the planned
 * time kept for the processor (`job.scheduledAt`, `opts.prevMillis`) through retries.
 */
import type { Redis as IORedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { type ActiveJob, Queue, toRedisPort, Worker } from "../../core/index.ts";
import { addIterations } from "../../core/redis/generated/scripts.ts";
import { attentionKey, queueKeys } from "../../core/redis/keys.ts";
import { runScript } from "../../core/redis/scripts.ts";
import { keysUnder, sharedConnection, sharedRedis, uniquePrefix } from "../support/stack.ts";

const raw: IORedis = sharedConnection();
afterAll(() => raw.disconnect());

function setup(label = "iter") {
  const prefix = uniquePrefix(label);
  const redis = sharedRedis();
  const key = (suffix: string) => `${prefix}:q:${suffix}`;
  const queue = (clock?: () => number) => new Queue("q", { redis, prefix, ...(clock ? { clock } : {}) });
  const worker = (processor: (job: ActiveJob) => Promise<unknown>, clock?: () => number) => {
    const w = new Worker("q", processor, { redis, prefix, ...(clock ? { clock } : {}) });
    w.on("error", () => {});
    return w;
  };
  return { prefix, key, queue, worker, redis };
}

describe("the next iteration", () => {
  it("exists before the processor runs, `every` ms after the current one, with ic and count raised", async () => {
    const { key, queue, worker } = setup();
    const first = await queue().upsertJobScheduler("tick", { every: 60_000 }, { data: { n: 1 } });
    const planned = first?.scheduledAt as number;
    const seen: unknown[] = [];
    await worker(async (job) => {
      seen.push({
        id: job.id,
        scheduledAt: job.scheduledAt,
        next: await raw.zscore(key("repeat"), "tick"),
        nextJob: await raw.hget(key(`repeat:tick:${planned + 60_000}`), "opts"),
      });
    }).drain();
    expect(seen).toHaveLength(1);
    const [only] = seen as { id: string; scheduledAt: number; next: string; nextJob: string }[];
    expect(only).toMatchObject({
      id: `repeat:tick:${planned}`,
      scheduledAt: planned,
      next: String(planned + 60_000),
    });
    expect(JSON.parse(only?.nextJob as string)).toMatchObject({
      attempts: 0,
      repeat: { every: 60_000, count: 2 },
      repeatJobKey: "tick",
      jobId: `repeat:tick:${planned + 60_000}`,
    });
    expect(JSON.parse(only?.nextJob as string).prevMillis).toBeUndefined();
    expect(await raw.hget(key("repeat:tick"), "ic")).toBe("2");
    expect(await raw.hget(key(`repeat:tick:${planned + 60_000}`), "data")).toBe('{"n":1}');
  });

  it("follows a cron pattern across the New York spring-forward (injected clocks)", async () => {
    const { key, queue, worker } = setup();
    let now = Date.parse("2027-03-13T07:00:00Z");
    const clock = () => now;
    await queue(clock).upsertJobScheduler("nightly", { pattern: "30 2 * * *", tz: "America/New_York" });
    const runs: { id: string; scheduledAt: number | undefined; prevMillis: unknown }[] = [];
    const w = worker(async (job) => {
      runs.push({ id: job.id, scheduledAt: job.scheduledAt, prevMillis: job.opts.prevMillis });
    }, clock);
    for (const iso of ["2027-03-13T07:30:01Z", "2027-03-14T07:30:02Z", "2027-03-15T06:30:01Z"]) {
      now = Date.parse(iso);
      await w.drain();
    }
    const instants = ["2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z", "2027-03-15T06:30:00Z"].map(Date.parse);
    expect(runs).toEqual(instants.map((t) => ({ id: `repeat:nightly:${t}`, scheduledAt: t, prevMillis: t })));
    expect(await raw.zscore(key("repeat"), "nightly")).toBe(String(Date.parse("2027-03-16T06:30:00Z")));
  });

  it("stops at the limit and after endDate; the last iteration still runs", async () => {
    const { key, queue, worker } = setup();
    let now = Date.now();
    const clock = () => now;
    await queue(clock).upsertJobScheduler("three", { every: 1000, limit: 3 });
    await queue(clock).upsertJobScheduler("until", { every: 1000, endDate: now + 1500 });
    const ran: string[] = [];
    const w = worker(async (job) => {
      ran.push(job.id);
    }, clock);
    for (let i = 0; i < 5; i++) {
      await w.drain();
      now += 1000;
    }
    const start = now - 5000;
    expect(ran.filter((id) => id.startsWith("repeat:three:"))).toEqual(
      [0, 1, 2].map((k) => `repeat:three:${start + k * 1000}`),
    );
    // BullMQ's rule: an iteration taken before endDate still makes the next one.
    expect(ran.filter((id) => id.startsWith("repeat:until:"))).toEqual(
      [0, 1, 2].map((k) => `repeat:until:${start + k * 1000}`),
    );
    expect(await raw.hget(key("repeat:three"), "ic")).toBe("3");
    expect(await raw.zcard(key("delayed"))).toBe(0);
  });

  it("a retry hours later keeps the planned time and makes no second next iteration", async () => {
    const { key, queue, worker } = setup();
    let now = Date.parse("2027-06-01T03:59:00Z");
    const clock = () => now;
    await queue(clock).upsertJobScheduler(
      "daily-report",
      { pattern: "0 6 * * *", tz: "Europe/Berlin" },
      { opts: { attempts: 2, backoff: { type: "fixed", delay: 3 * 3600_000 } } },
    );
    const windows: string[] = [];
    const w = worker(async (job) => {
      const to = job.scheduledAt ?? job.timestamp;
      windows.push(`${new Date(to - 86_400_000).toISOString()}..${new Date(to).toISOString()}`);
      if (job.attemptsMade === 0) throw new Error("report service down");
    }, clock);
    now = Date.parse("2027-06-01T04:00:05Z"); // 06:00 CEST: the first run, which fails
    await w.drain();
    now = Date.parse("2027-06-01T07:00:06Z"); // the retry, three hours later
    await w.drain();
    expect(windows).toEqual([
      "2027-05-31T04:00:00.000Z..2027-06-01T04:00:00.000Z",
      "2027-05-31T04:00:00.000Z..2027-06-01T04:00:00.000Z",
    ]);
    const iterations = await keysUnder(raw, key("repeat:daily-report"));
    expect(iterations).toEqual([
      key(`repeat:daily-report:${Date.parse("2027-06-01T04:00:00Z")}`),
      key(`repeat:daily-report:${Date.parse("2027-06-02T04:00:00Z")}`),
    ]);
    expect(await raw.hget(key("repeat:daily-report"), "ic")).toBe("2");
  });

  it("never makes an iteration twice: stale producers and existing jobs make nothing", async () => {
    const { key, queue, prefix, redis } = setup();
    const now = Date.now();
    await queue(() => now).upsertJobScheduler("tick", { every: 5000 });
    const next = (current: string) =>
      runScript(
        toRedisPort(redis),
        addIterations,
        { ...queueKeys(prefix, "q"), schedulers: key("repeat"), attention: attentionKey(prefix) },
        {
          prefix: `${prefix}:q:`,
          now,
          maxLenEvents: 10_000,
          iterations: [
            {
              schedulerId: "tick",
              idJson: "tick",
              current,
              nextMillis: "",
              again: "",
              optsHead: "{",
              priority: 0,
              lifo: "",
              group: "",
            },
          ],
        },
      );
    expect(await next(`repeat:tick:${now}`)).toEqual([`repeat:tick:${now + 5000}`]);
    // Replayed or late: the scheduler has moved on, so this producer is stale.
    expect(await next(`repeat:tick:${now}`)).toEqual([0]);
    expect(await raw.zscore(key("repeat"), "tick")).toBe(String(now + 5000));
    // A next iteration that exists already is left alone (BullMQ's `duplicated`).
    await raw.hset(key(`repeat:tick:${now + 10_000}`), "name", "kept");
    expect(await next(`repeat:tick:${now + 5000}`)).toEqual([0]);
    expect(await raw.hgetall(key(`repeat:tick:${now + 10_000}`))).toEqual({ name: "kept" });
    const last = await raw.xrevrange(key("events"), "+", "-", "COUNT", 1);
    expect(last[0]?.[1]).toEqual(["event", "duplicated", "jobId", `repeat:tick:${now + 10_000}`]);
  });
});

describe("when making the next iteration fails", () => {
  it("leaves the scheduler's jobs unstarted (the stalled check brings them back) and runs the rest", async () => {
    const { prefix, queue } = setup();
    await queue().upsertJobScheduler("tick", { every: 60_000 });
    await queue().add("plain", {});
    const port = toRedisPort(sharedRedis());
    const failing = {
      evalsha: (sha: string, keys: string[], args: string[]) =>
        sha === addIterations.sha1
          ? Promise.reject(new Error("connection reset"))
          : port.evalsha(sha, keys, args),
      eval: port.eval,
      hgetall: port.hgetall,
    };
    const ran: string[] = [];
    const errors: string[] = [];
    // No retries: the failure is final at once (a retried one would be the same failure, later).
    const w = new Worker("q", async (job) => ran.push(job.name), {
      redis: failing,
      prefix,
      retry: { windowMs: 0 },
    });
    w.on("error", (error) => errors.push(error.message));
    await w.drain();
    expect(ran).toEqual(["plain"]);
    expect(errors).toEqual([expect.stringMatching(/^Redis script addIterations .*: connection reset$/)]);
    expect(await raw.lrange(`${prefix}:q:active`, 0, -1)).toEqual([expect.stringMatching(/^repeat:tick:/)]);
  });
});

describe("stalled iterations", () => {
  it("are requeued without `defa` however often they stall; other jobs get it past maxStalledCount", async () => {
    const { key, queue, worker } = setup();
    const iteration = await queue().upsertJobScheduler("tick", { every: 60_000 });
    const plain = await queue().add("plain", {});
    const ids = [iteration?.id as string, plain.id];
    await raw.del(key("wait"));
    const w = worker(async () => undefined);
    for (let round = 0; round < 3; round++) {
      await raw.lpush(key("active"), ...ids);
      await raw.del(key("stalled-check"));
      await w.recoverStalled(); // snapshot
      await raw.del(key("stalled-check"));
      expect((await w.recoverStalled()).sort()).toEqual([...ids].sort());
      await raw.del(key("wait"));
    }
    expect(await raw.hget(key(ids[0] as string), "stc")).toBe("3");
    expect(await raw.hget(key(ids[0] as string), "defa")).toBe(null);
    expect(await raw.hget(key(plain.id), "defa")).toBe("job stalled more than allowable limit");
  });
});
