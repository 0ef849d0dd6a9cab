/**
 * The queue-wide settings — manual rate limit, global concurrency and rate limit, deduplication
 * windows, metrics — written and read by nimbusq and bullmq@6.7.0 alike, honoured by real BullMQ
 * workers, and bad input.
 */
import { Worker as BullWorker } from "bullmq";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../core/index.ts";
import { bullConnection } from "../support/bullmq-peer.ts";
import { keysUnder } from "../support/stack.ts";
import { direct, sleep, twins, useTwins } from "../support/twin-queues.ts";

useTwins();

describe("the manual rate limit", () => {
  it("is BullMQ's limiter key, read back alike by both, and holds a real BullMQ worker with a limiter back", async () => {
    const t = twins();
    const queue = t.queue("n");
    const bull = t.bull("n");
    expect(await queue.getRateLimitTtl()).toBe(-2);
    expect(await queue.getRateLimitTtl()).toBe(await bull.getRateLimitTtl());
    await queue.rateLimit(1500);
    expect(await direct.get(t.key("n", "limiter"))).toBe("9007199254740991");
    const ours = await queue.getRateLimitTtl();
    const theirs = await bull.getRateLimitTtl();
    expect(ours).toBeGreaterThan(1000);
    expect(Math.abs(ours - theirs)).toBeLessThan(200);
    expect(await queue.getRateLimitTtl(5)).toBeGreaterThan(1000);

    const started: number[] = [];
    const from = Date.now();
    // BullMQ workers heed the manual limit only when a max applies (their limiter or the global max).
    const worker = new BullWorker("n", async () => void started.push(Date.now() - from), {
      connection: bullConnection(),
      prefix: t.prefix,
      limiter: { max: 100, duration: 1000 },
    });
    try {
      await queue.add("x", {});
      for (let i = 0; i < 200 && started.length === 0; i++) await sleep(25);
      expect(started).toHaveLength(1);
      expect(started[0]).toBeGreaterThan(1000);
    } finally {
      await worker.close();
    }
  });

  it("counts against a global max as BullMQ does", async () => {
    const t = twins();
    const queue = t.queue("n");
    await queue.setGlobalRateLimit(3, 10_000);
    await direct.set(t.key("n", "limiter"), "2", "PX", 8000);
    expect(await queue.getRateLimitTtl()).toBe(0);
    expect(await t.bull("n").getRateLimitTtl()).toBe(0);
    await direct.set(t.key("n", "limiter"), "3", "PX", 8000);
    expect(await queue.getRateLimitTtl()).toBeGreaterThan(7000);
    expect(await queue.getRateLimitTtl(4)).toBe(0);
  });
});

describe("global concurrency and rate limit", () => {
  it("are meta fields that BullMQ reads as nimbusq wrote them, and the other way round", async () => {
    const t = twins();
    const queue = t.queue("n");
    const bull = t.bull("n");
    expect(await queue.getGlobalConcurrency()).toBeNull();
    await queue.setGlobalConcurrency(3);
    expect(await direct.hget(t.key("n", "meta"), "concurrency")).toBe("3");
    expect(await bull.getGlobalConcurrency()).toBe(3);
    await bull.setGlobalConcurrency(5);
    expect(await queue.getGlobalConcurrency()).toBe(5);
    await queue.removeGlobalConcurrency();
    expect(await bull.getGlobalConcurrency()).toBeNull();

    expect(await queue.getGlobalRateLimit()).toBeNull();
    await queue.setGlobalRateLimit(10, 1000);
    expect(await direct.hmget(t.key("n", "meta"), "max", "duration")).toEqual(["10", "1000"]);
    expect(await bull.getGlobalRateLimit()).toEqual({ max: 10, duration: 1000 });
    await bull.setGlobalRateLimit(2, 500);
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 2, duration: 500 });
    await queue.removeGlobalRateLimit();
    expect(await bull.getGlobalRateLimit()).toBeNull();
    expect(await direct.hkeys(t.key("n", "meta"))).not.toContain("max");
  });

  it("caps a real BullMQ worker of concurrency 4 at the global concurrency nimbusq set", async () => {
    const t = twins();
    const queue = t.queue("n");
    await queue.setGlobalConcurrency(1);
    let running = 0;
    let most = 0;
    let done = 0;
    const worker = new BullWorker(
      "n",
      async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(80);
        running -= 1;
        done += 1;
      },
      { connection: bullConnection(), prefix: t.prefix, concurrency: 4 },
    );
    try {
      await queue.addBulk([1, 2, 3, 4].map((i) => ({ name: "j", data: { i } })));
      for (let i = 0; i < 400 && done < 4; i++) await sleep(25);
      expect(done).toBe(4);
      expect(most).toBe(1);
    } finally {
      await worker.close();
    }
  });
});

describe("deduplication windows", () => {
  it("are read and ended as BullMQ reads and ends them", async () => {
    const t = twins();
    const queue = t.queue("n");
    const bull = t.bull("n");
    const owner = await queue.add("x", {}, { deduplication: { id: "d" } });
    expect(await queue.getDeduplicationJobId("d")).toBe(owner.id);
    expect(await bull.getDeduplicationJobId("d")).toBe(owner.id);
    expect(await queue.getDeduplicationJobId("none")).toBeNull();
    expect(await queue.removeDeduplicationKey("d")).toBe(1);
    expect(await queue.removeDeduplicationKey("d")).toBe(0);
    expect(await bull.getDeduplicationJobId("d")).toBeNull();
    const next = await queue.add("x", {}, { deduplication: { id: "d" } });
    expect(next.id).not.toBe(owner.id);
    await bull.removeDeduplicationKey("d");
    expect(await queue.getDeduplicationJobId("d")).toBeNull();
  });
});

describe("metrics", () => {
  it("reads what a BullMQ worker with metrics on recorded, as BullMQ's getMetrics does", async () => {
    const t = twins();
    const queue = t.queue("n");
    const bull = t.bull("n");
    expect(await queue.getMetrics("completed")).toEqual(await bull.getMetrics("completed"));
    let done = 0;
    const worker = new BullWorker(
      "n",
      async (job) => {
        done += 1;
        if (job.name === "bad") throw new Error("bad");
      },
      { connection: bullConnection(), prefix: t.prefix, metrics: { maxDataPoints: 10 } },
    );
    try {
      await queue.addBulk(["a", "b", "bad"].map((name) => ({ name, data: {} })));
      for (let i = 0; i < 200 && done < 3; i++) await sleep(25);
      await sleep(100);
    } finally {
      await worker.close();
    }
    for (const type of ["completed", "failed"] as const) {
      const ours = await queue.getMetrics(type);
      expect(ours).toEqual(await bull.getMetrics(type));
      expect(ours.meta.count).toBe(type === "completed" ? 2 : 1);
      expect(await queue.getMetrics(type, 0, 0)).toEqual(await bull.getMetrics(type, 0, 0));
    }
  });
});

describe("settings' arguments", () => {
  it("are refused with a ValidationError naming the field, writing nothing", async () => {
    const t = twins();
    const queue = t.queue("n");
    await queue.add("x", {});
    const before = await keysUnder(direct, t.prefix);
    const bad: [() => Promise<unknown>, string][] = [
      [() => queue.rateLimit(0), "expireTimeMs"],
      [() => queue.rateLimit(1.5), "expireTimeMs"],
      [() => queue.getRateLimitTtl(0), "maxJobs"],
      [() => queue.setGlobalConcurrency(0), "concurrency"],
      [() => queue.setGlobalConcurrency("2" as unknown as number), "concurrency"],
      [() => queue.setGlobalRateLimit(0, 1000), "max"],
      [() => queue.setGlobalRateLimit(5, -1), "duration"],
      [() => queue.getDeduplicationJobId(""), "id"],
      [() => queue.removeDeduplicationKey(3 as unknown as string), "id"],
      [() => queue.getMetrics("active" as "failed"), "type"],
      [() => queue.getMetrics("failed", 0.5), "start"],
    ];
    for (const [call, field] of bad) {
      const promise = call();
      await expect(promise).rejects.toBeInstanceOf(ValidationError);
      await expect(promise).rejects.toMatchObject({ field });
    }
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
  });
});
