/**
 * Issue 11, points 1–3, through the TS API: custom job ids that name a queue key (or whose sub-keys
 * would), ids in the spaces nimbusq and BullMQ write themselves, and queue names that are not safe as
 * part of a key are refused with a ValidationError naming the field and the rule, writing nothing (a
 * digest of every key's DUMP under the prefix is unchanged). Valid edge names are accepted.
 */
import { describe, expect, it } from "vitest";
import { FlowProducer, Queue, ValidationError, Worker } from "../../core/index.ts";
import { jobIdPattern, jobIdProblem, queueNamePattern, queueNameProblem } from "../../core/redis/names.ts";
import { keyspaceDigest } from "../support/keyspace.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

/** Every key name BullMQ 6 (layout doc §2) and nimbusq (core/redis/keys.ts) keep under `{P}`, spelled out. */
const queueKeyIds = [
  ...["id", "meta", "wait", "paused", "active", "prioritized", "pc", "delayed", "waiting-children"],
  ...["completed", "failed", "stalled", "stalled-check", "marker", "events", "limiter", "repeat"],
  ...["delay", "priority", "metrics", "de", "dn", "dl", "nq", "nq-req"],
];
const subKeyIds = [
  "a:b:lock",
  "a:b:logs",
  "a:b:dependencies",
  "a:b:processed",
  "a:b:failed",
  "a:b:unsuccessful",
];
const spaceIds: [string, string][] = [
  ["dl:email:1", "dl:"],
  ["repeat:nightly:1767225600000", "repeat:"],
  ["repeat:nightly", "repeat:"],
  ["metrics:completed:data", "metrics:"],
  ["metrics:failed", "metrics:"],
  ["de:window:x", "de:"],
  ["dn:window:x", "dn:"],
  ["nq:workers:x", "nq:"],
  ["nq-req:token:x", "nq-req:"],
];
const badQueueNames: [string, string, RegExp][] = [
  ["NUL", "a\u0000b", /control characters/],
  ["CR/LF", "a\r\nb", /control characters/],
  ["a tab", "a\tb", /control characters/],
  ["DEL", "a\u007fb", /control characters/],
  ["a C1 control", "a\u0085b", /control characters/],
  ["a colon", "a:b", /":"/],
  ["a slash", "a/b", /"\/"/],
  ["..", "..", /"\." and "\.\."/],
  [".", ".", /"\." and "\.\."/],
  ["*", "a*", /glob/],
  ["?", "a?", /glob/],
  ["[ ]", "a[1]", /glob/],
  ["a backslash", "a\\b", /glob/],
  ["{", "{q}", /"\{" or "\}"/],
  ["}", "q}", /"\{" or "\}"/],
  ["nq", "nq", /"nq"/],
  ["nq-req", "nq-req", /"nq-req"/],
  ["201 bytes", "x".repeat(201), /at most 200 bytes of UTF-8/],
  ["202 bytes of é", "é".repeat(101), /at most 200 bytes of UTF-8/],
  ["a lone surrogate", "a\uD800", /well-formed/],
  ["a zero-width space", "a\u200Bb", /zero-width or bidirectional/],
  ["a right-to-left override", "a\u202Eb", /zero-width or bidirectional/],
  ["a byte-order mark", "\uFEFFq", /zero-width or bidirectional/],
  ["empty", "", /non-empty/],
];
const goodQueueNames = [
  "x".repeat(200),
  "é".repeat(100),
  "队列-émail 📨",
  "a.b",
  "...",
  "nq2",
  "a b",
  "-dlq",
];

async function expectRefused(prefix: string, action: () => unknown, field: string, rule: RegExp) {
  const before = await keyspaceDigest(direct, prefix);
  let error: unknown;
  try {
    await action();
  } catch (e) {
    error = e;
  }
  expect(error, `${field} ${rule}`).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).field).toBe(field);
  expect((error as ValidationError).rule).toMatch(rule);
  expect((error as Error).message).toContain(`${field} must be`);
  expect(await keyspaceDigest(direct, prefix)).toBe(before);
}

async function seeded(name = "q"): Promise<{ prefix: string; queue: Queue }> {
  const prefix = uniquePrefix();
  const queue = new Queue(name, { redis: sharedRedis(), prefix });
  await queue.add("seed", {});
  return { prefix, queue };
}

describe("1. job ids that name queue keys", () => {
  for (const id of queueKeyIds) {
    it(`refuses jobId "${id}" (add, addBulk, flow), writing nothing`, async () => {
      const { prefix, queue } = await seeded();
      const rule = /queue's own keys/;
      await expectRefused(prefix, () => queue.add("x", {}, { jobId: id }), "opts.jobId", rule);
      const bulk = [
        { name: "ok", data: {} },
        { name: "x", data: {}, opts: { jobId: id } },
      ];
      await expectRefused(prefix, () => queue.addBulk(bulk), "jobs[1].opts.jobId", rule);
      const flow = new FlowProducer({ redis: sharedRedis(), prefix });
      const tree = {
        name: "p",
        queueName: "q",
        children: [{ name: "c", queueName: "q", opts: { jobId: id } }],
      };
      await expectRefused(prefix, () => flow.add(tree), "children[0].opts.jobId", rule);
    });
  }

  it("refuses ids whose hash would read as a job's sub-key (a:b:lock, …)", async () => {
    const { prefix, queue } = await seeded();
    for (const id of subKeyIds) {
      await expectRefused(prefix, () => queue.add("x", {}, { jobId: id }), "opts.jobId", /sub-key name/);
    }
  });

  it("refuses a key name from defaultJobOptions and as a parent id", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    await new Queue("q", { redis, prefix }).add("seed", {});
    const defaults = new Queue("q", { redis, prefix, defaultJobOptions: { jobId: "meta" } });
    await expectRefused(prefix, () => defaults.add("x", {}), "opts.jobId", /queue's own keys/);
    const queue = new Queue("q", { redis, prefix });
    const parent = { id: "meta", queue: `${prefix}:q` };
    await expectRefused(prefix, () => queue.add("x", {}, { parent }), "opts.parent.id", /queue's own keys/);
  });

  it("still refuses what BullMQ refuses, and accepts ids near the rules", async () => {
    const { prefix, queue } = await seeded();
    await expectRefused(prefix, () => queue.add("x", {}, { jobId: "12" }), "opts.jobId", /not an integer/);
    await expectRefused(prefix, () => queue.add("x", {}, { jobId: "a:b" }), "opts.jobId", /three/);
    const good = [
      "waiting",
      "metas",
      "lock",
      "a:lock:b",
      "dl-1",
      "x:dl:y",
      "repeat-1",
      "ジョブ-1",
      "a:b:locks",
    ];
    for (const id of good) {
      const job = await queue.add("x", { id }, { jobId: id });
      expect(job.id).toBe(id);
      expect((await queue.getJob(id))?.data).toEqual({ id });
    }
  });
});

describe("1b. job ids with invisible characters", () => {
  const ids: [string, string, RegExp][] = [
    ["NUL", "a\u0000b", /control characters/],
    ["CR/LF", "a\r\nb", /control characters/],
    ["a tab", "a\tb", /control characters/],
    ["a zero-width joiner", "a\u200Db", /zero-width or bidirectional/],
    ["a left-to-right isolate", "\u2066ab", /zero-width or bidirectional/],
    ["a right-to-left override", "invoice-\u202Efdp.exe", /zero-width or bidirectional/],
  ];
  for (const [label, id, rule] of ids) {
    it(`refuses a custom job id with ${label} (add and flow), writing nothing`, async () => {
      const { prefix, queue } = await seeded();
      await expectRefused(prefix, () => queue.add("x", {}, { jobId: id }), "opts.jobId", rule);
      const flow = new FlowProducer({ redis: sharedRedis(), prefix });
      await expectRefused(
        prefix,
        () => flow.add({ name: "p", queueName: "q", opts: { jobId: id } }),
        "opts.jobId",
        rule,
      );
    });
  }
  it("accepts ids in any script, emoji included", async () => {
    const { queue } = await seeded();
    for (const id of ["заказ-7", "注文-7", "order-📦"])
      expect((await queue.add("x", {}, { jobId: id })).id).toBe(id);
  });
});

describe("2. ids in reserved id spaces", () => {
  for (const [id, space] of spaceIds) {
    it(`refuses jobId "${id}" naming the space ${space}`, async () => {
      const { prefix, queue } = await seeded("email-dlq");
      const rule = new RegExp(`reserved id space "${space}…"`);
      await expectRefused(prefix, () => queue.add("x", {}, { jobId: id }), "opts.jobId", rule);
    });
  }

  it("the dead-letter writer, redrive and the scheduler still make ids in their spaces", async () => {
    const prefix = uniquePrefix();
    const redis = sharedRedis();
    const email = new Queue("email", { redis, prefix });
    const dlq = new Queue("email-dlq", { redis, prefix });
    // A producer cannot take the dead letter's place…
    await expectRefused(prefix, () => dlq.add("send", {}, { jobId: "dl:email:1" }), "opts.jobId", /"dl:…"/);
    const job = await email.add("send", { to: "a" }, { deadLetter: { queue: "email-dlq" } });
    expect(job.id).toBe("1");
    const worker = new Worker(
      "email",
      async () => {
        throw new Error("boom");
      },
      { redis, prefix },
    );
    worker.on("error", () => {});
    await worker.drain();
    // …so the real one is written, with its data.
    const letter = await dlq.getJob("dl:email:1");
    expect(letter?.data).toMatchObject({ job: { id: "1", queue: "email" }, failedReason: "boom" });
    const redriven = await email.redrive();
    expect(redriven.count).toBe(1);
    expect(await dlq.getJob("dl:email:1")).toBeUndefined();

    const scheduled = await email.upsertJobScheduler("nightly", { every: 60_000 }, { name: "tick" });
    expect(scheduled?.id).toMatch(/^repeat:nightly:\d+$/);
    expect(await direct.exists(`${prefix}:email:${scheduled?.id}`)).toBe(1);
  });
});

describe("3. queue names", () => {
  for (const [label, name, rule] of badQueueNames) {
    it(`refuses a queue name with ${label} wherever one enters`, async () => {
      const { prefix, queue } = await seeded();
      const redis = sharedRedis();
      await expectRefused(prefix, () => new Queue(name, { redis, prefix }), "queueName", rule);
      await expectRefused(
        prefix,
        () => new Worker(name, async () => {}, { redis, prefix }),
        "queueName",
        rule,
      );
      const flow = new FlowProducer({ redis, prefix });
      const tree = { name: "p", queueName: "q", children: [{ name: "c", queueName: name }] };
      await expectRefused(prefix, () => flow.add(tree), "children[0].queueName", rule);
      const deadLetter = { queue: name };
      await expectRefused(prefix, () => queue.add("x", {}, { deadLetter }), "opts.deadLetter.queue", rule);
      await expectRefused(
        prefix,
        () => new Worker("q", async () => {}, { redis, prefix, deadLetter }),
        "deadLetter.queue",
        rule,
      );
      await expectRefused(prefix, () => queue.redrive({ from: name }), "from", rule);
      if (name !== "" && !name.includes(":")) {
        const parent = { id: "p", queue: `${prefix}:${name}` };
        await expectRefused(prefix, () => queue.add("x", {}, { parent }), "opts.parent.queue", rule);
      }
    });
  }

  it("accepts edge names: 200 bytes exactly, unicode, dots inside", async () => {
    const prefix = uniquePrefix();
    for (const name of goodQueueNames) {
      const queue = new Queue(name, { redis: sharedRedis(), prefix });
      const job = await queue.add("x", { name });
      expect(await direct.hget(`${prefix}:${name}:${job.id}`, "data")).toBe(JSON.stringify({ name }));
      const flow = new FlowProducer({ redis: sharedRedis(), prefix });
      const node = await flow.add({ name: "p", queueName: name, children: [{ name: "c", queueName: name }] });
      expect(node.children?.[0]?.job.queueName).toBe(name);
    }
  });

  it("job names: at most 1,000 bytes of UTF-8 (adds and scheduler templates)", async () => {
    const { prefix, queue } = await seeded();
    const name = "é".repeat(500);
    expect((await queue.add(name, {})).name).toBe(name);
    const rule = /at most 1000 bytes of UTF-8/;
    await expectRefused(prefix, () => queue.add("x".repeat(1001), {}), "name", rule);
    await expectRefused(prefix, () => queue.add(`${name}x`, {}), "name", rule);
    const template = { name: "x".repeat(1001) };
    await expectRefused(
      prefix,
      () => queue.upsertJobScheduler("s", { every: 1000 }, template),
      "template.name",
      rule,
    );
  });
});

describe("the OpenAPI patterns agree with core's rules", () => {
  it("for queue names and job ids (length aside)", () => {
    const queueName = new RegExp(queueNamePattern, "u");
    for (const [, name] of badQueueNames.filter(([label]) => !/bytes|surrogate/.test(label)))
      expect(queueName.test(name), JSON.stringify(name)).toBe(false);
    for (const name of goodQueueNames)
      expect(queueName.test(name)).toBe(queueNameProblem(name) === undefined);
    const jobId = new RegExp(jobIdPattern, "u");
    const ids = [
      ...queueKeyIds,
      ...subKeyIds,
      ...spaceIds.map(([id]) => id),
      "12",
      "-3",
      "0",
      "0:a:b",
      "a:b",
    ];
    const good = ["waiting", "metas", "a:lock:b", "x:dl:y", "ジョブ-1", "a::b", "a:b:locks", "sqs-1#0"];
    for (const id of [...ids, ...good]) expect(jobId.test(id), id).toBe(jobIdProblem(id) === undefined);
    for (const id of ids) expect(jobIdProblem(id), id).toBeDefined();
  });
});
