import { describe, expect, it } from "vitest";
import { FlowProducer, Queue, ValidationError } from "../../core/index.ts";
import type { JobsOptions } from "../../core/types.ts";
import { directConnectionForFile, keysUnder, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

async function expectRejected(
  prefix: string,
  action: () => Promise<unknown>,
  field: string,
  rule: RegExp,
): Promise<void> {
  const before = await keysUnder(direct, prefix);
  const error = await action().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).field).toBe(field);
  expect((error as ValidationError).rule).toMatch(rule);
  expect((error as Error).message).toContain(field);
  expect(await keysUnder(direct, prefix)).toEqual(before);
}

describe("bad input is refused with a typed error and writes nothing", () => {
  it("refuses invalid queue names", () => {
    const redis = sharedRedis();
    expect(() => new Queue("a:b", { redis })).toThrow(ValidationError);
    expect(() => new Queue("", { redis })).toThrow(/queueName must be a non-empty string/);
    expect(() => new Queue(42 as unknown as string, { redis })).toThrow(/queueName/);
  });

  const cases: [string, JobsOptions | Record<string, unknown>, string, RegExp][] = [
    ["priority too high", { priority: 2 ** 21 }, "opts.priority", /integer from 0 to 2097151/],
    ["negative priority", { priority: -1 }, "opts.priority", /integer/],
    ["negative delay", { delay: -5 }, "opts.delay", /integer from 0/],
    ["infinite delay", { delay: Number.POSITIVE_INFINITY }, "opts.delay", /integer/],
    ["NaN delay", { delay: Number.NaN }, "opts.delay", /integer/],
    ["integer custom id", { jobId: "123" }, "opts.jobId", /not an integer/],
    ["custom id with one colon", { jobId: "a:b" }, "opts.jobId", /three/],
    ["custom id 0:x:y", { jobId: "0:x:y" }, "opts.jobId", /other than "0"/],
    ["empty custom id", { jobId: "" }, "opts.jobId", /non-empty string/],
    ["string attempts", { attempts: "3" }, "opts.attempts", /integer/],
    ["unknown option", { prioirty: 1 }, "opts.prioirty", /one of the known keys/],
    ["BullMQ's repeat", { repeat: { every: 1000 } }, "opts.repeat", /upsertJobScheduler/],
    [
      "backoff jitter > 1",
      { backoff: { type: "fixed", delay: 10, jitter: 2 } },
      "opts.backoff.jitter",
      /0 to 1/,
    ],
    ["backoff without type", { backoff: { delay: 10 } }, "opts.backoff.type", /non-empty string/],
    ["removeOnComplete string", { removeOnComplete: "yes" }, "opts.removeOnComplete", /object/],
    ["removeOnFail negative count", { removeOnFail: { count: -1 } }, "opts.removeOnFail.count", /integer/],
    ["dedup without id", { deduplication: { ttl: 100 } }, "opts.deduplication.id", /non-empty string/],
    [
      "dedup with parent",
      { deduplication: { id: "d" }, parent: { id: "p", queue: "bull:x" } },
      "opts.deduplication",
      /parent/,
    ],
    [
      "parent queue without prefix",
      { parent: { id: "p", queue: "x" } },
      "opts.parent.queue",
      /<prefix>:<queueName>/,
    ],
    ["lifo not boolean", { lifo: 1 }, "opts.lifo", /boolean/],
    ["due past 2039", { delay: 2 ** 41 - 1 }, "opts.delay", /2\^41/],
  ];
  for (const [label, opts, field, rule] of cases) {
    it(`refuses ${label}`, async () => {
      const prefix = uniquePrefix();
      const queue = new Queue("q", { redis: sharedRedis(), prefix });
      await queue.add("seed", {});
      await expectRejected(prefix, () => queue.add("x", {}, opts as JobsOptions), field, rule);
    });
  }

  it("refuses data JSON cannot carry and data over the size limit", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: sharedRedis(), prefix, maxDataBytes: 1024 });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expectRejected(prefix, () => queue.add("x", circular), "data", /JSON-serializable/);
    await expectRejected(prefix, () => queue.add("x", { n: 10n }), "data", /JSON-serializable/);
    await expectRejected(prefix, () => queue.add("x", (() => 1) as unknown), "data", /JSON-serializable/);
    await expectRejected(prefix, () => queue.add("x", { s: "é".repeat(600) }), "data", /at most 1024 bytes/);
    await expectRejected(
      prefix,
      () => queue.add("x", { s: "a" }, { sizeLimit: 3 }),
      "data",
      /at most 3 bytes/,
    );
  });

  it("refuses a whole bulk when one job is bad, naming it", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    await expectRejected(
      prefix,
      () =>
        queue.addBulk([
          { name: "a", data: {} },
          { name: "b", data: {}, opts: { priority: 1.5 } },
        ]),
      "jobs[1].opts.priority",
      /integer/,
    );
    await expectRejected(
      prefix,
      () => queue.addBulk([null as never, { name: "a", data: {} }]),
      "jobs[0]",
      /object/,
    );
  });

  it("refuses a flow with a bad node or a missing parent and writes none of it", async () => {
    const prefix = uniquePrefix();
    const flow = new FlowProducer({ redis: sharedRedis(), prefix });
    await expectRejected(
      prefix,
      () =>
        flow.add({
          name: "p",
          queueName: "q",
          children: [{ name: "c", queueName: "other", opts: { priority: -2 } }],
        }),
      "children[0].opts.priority",
      /integer/,
    );
    await expectRejected(
      prefix,
      () =>
        flow.add({
          name: "p",
          queueName: "q",
          opts: { deduplication: { id: "d" } },
          children: [{ name: "c", queueName: "q" }],
        }),
      "opts.deduplication",
      /children/,
    );
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const before = await keysUnder(direct, prefix);
    await expect(queue.add("orphan", {}, { parent: { id: "nope", queue: `${prefix}:q` } })).rejects.toThrow(
      /parent of job .* does not exist/,
    );
    expect(await keysUnder(direct, prefix)).toEqual(before);
  });
});
