import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Queue, toRedisPort } from "../../core/index.ts";
import { sqsProducer } from "../../functions/producers/index.ts";
import { lambdaContext, sqsEvent } from "../support/aws-events.ts";
import {
  directConnectionForFile,
  type PrivateStack,
  sharedRedis,
  silenceWarnings,
  startPrivateStack,
  uniquePrefix,
} from "../support/stack.ts";

const direct = directConnectionForFile();
silenceWarnings();

const context = lambdaContext();
const body = (record: SQSRecord) => JSON.parse(record.body) as Record<string, unknown>;

describe("sqsProducer", () => {
  it("adds one job per message in BullMQ's layout, with the data and options map gave and derived ids", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({
      queue: "email",
      redis: sharedRedis(),
      prefix,
      map: (record) => ({ name: "send", data: body(record), opts: { attempts: 3, priority: 0 } }),
    });
    const event = sqsEvent([{ body: '{"to":"a@example.com"}' }, { body: '{"to":"b@example.com"}' }]);
    const [first, second] = event.Records.map((r) => `sqs-${r.messageId}`);

    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });

    expect(await direct.lrange(`${prefix}:email:wait`, 0, -1)).toEqual([second, first]);
    const hash = await direct.hgetall(`${prefix}:email:${first}`);
    expect(hash).toMatchObject({ name: "send", data: '{"to":"a@example.com"}', delay: "0", priority: "0" });
    expect(JSON.parse(hash.opts as string)).toMatchObject({ attempts: 3, jobId: first });
  });

  it("makes no second job when the same batch is delivered again", async () => {
    const prefix = uniquePrefix();
    let calls = 0;
    const handler = sqsProducer({
      queue: "q",
      redis: sharedRedis(),
      prefix,
      map: (record) => ({ name: "n", data: { calls: ++calls, body: record.body } }),
    });
    const event = sqsEvent([{ body: "a" }, { body: "b" }, { body: "c" }]);

    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });

    const ids = event.Records.map((r) => `sqs-${r.messageId}`);
    expect((await direct.lrange(`${prefix}:q:wait`, 0, -1)).sort()).toEqual([...ids].sort());
    // The first delivery's data stays: the redelivered add found the jobs and changed nothing.
    expect(JSON.parse((await direct.hget(`${prefix}:q:${ids[0]}`, "data")) as string)).toEqual({
      calls: 1,
      body: "a",
    });
    const events = await direct.xrange(`${prefix}:q:events`, "-", "+");
    expect(events.filter(([, f]) => f[1] === "duplicated").map(([, f]) => f[3])).toEqual(ids);
  });

  it("reports exactly the messages whose map threw or whose job core refuses, and adds the others", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({
      queue: "q",
      redis: sharedRedis(),
      prefix,
      map: (record) => {
        const { kind } = body(record);
        if (kind === "throws") throw new Error("cannot parse");
        if (kind === "bad-opts") return { name: "n", data: {}, opts: { priority: -1 } };
        if (kind === "bad-data") return { name: "n", data: { big: 1n } };
        if (kind === "bad-id") return { name: "n", data: {}, opts: { jobId: "42" } };
        return { name: "n", data: { kind } };
      },
    });
    const kinds = ["ok", "throws", "bad-opts", "ok", "bad-data", "bad-id"];
    const event = sqsEvent(kinds.map((kind) => ({ body: JSON.stringify({ kind }) })));
    const ids = event.Records.map((r) => r.messageId);

    const answer = await handler(event, context);

    expect(answer).toEqual({
      batchItemFailures: [1, 2, 4, 5].map((i) => ({ itemIdentifier: ids[i] })),
    });
    expect((await direct.lrange(`${prefix}:q:wait`, 0, -1)).sort()).toEqual(
      [`sqs-${ids[0]}`, `sqs-${ids[3]}`].sort(),
    );
    expect(console.warn).toHaveBeenCalledTimes(4);
    expect(vi.mocked(console.warn).mock.calls[1]?.[0]).toMatch(
      new RegExp(`record ${ids[2]} reported .* \\(map\\): ValidationError: .*opts\\.priority`),
    );
  });

  it("adds several jobs per message with indexed ids, skips null, and keeps a jobId map set", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const handler = sqsProducer({
      queue,
      map: (record) => {
        if (record.body === "fan-out") return [1, 2, 3].map((n) => ({ name: "part", data: { n } }));
        if (record.body === "ignore") return null;
        return { name: "own", data: {}, opts: { jobId: `order-${record.body}` } };
      },
    });
    const event = sqsEvent([{ body: "fan-out" }, { body: "ignore" }, { body: "7" }]);
    const base = `sqs-${event.Records[0]?.messageId}`;

    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });

    const waiting = await queue.getWaiting();
    expect(waiting.map((job) => [job.id, job.data])).toEqual([
      [`${base}#0`, { n: 1 }],
      [`${base}#1`, { n: 2 }],
      [`${base}#2`, { n: 3 }],
      ["order-7", {}],
    ]);
  });

  it("uses the jobId option instead of the derived id", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({
      queue: "q",
      redis: sharedRedis(),
      prefix,
      jobId: (record) => `dedup-${record.attributes.SenderId}-${record.body}`,
      map: () => ({ name: "n", data: {} }),
    });
    await handler(sqsEvent([{ body: "x" }]), context);
    // A new message (new messageId) with the same body resolves to the same job.
    await handler(sqsEvent([{ body: "x" }]), context);
    expect(await direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["dedup-AIDAIENQZJOLO23YVJ4VO-x"]);
  });
});

describe("sqsProducer when Redis fails", () => {
  let stack: PrivateStack;
  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(() => stack.stop());

  /** The stack's client without retries beyond its own: a refused call fails at once. */
  const noRetries = () => toRedisPort(stack.redis, { windowMs: 0 });

  it("one 500 is retried with the same request: every message added once, none reported", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({
      queue: "q",
      redis: stack.redis,
      prefix,
      map: (record) => ({ name: "n", data: record.body }),
    });
    const event = sqsEvent([{ body: "a" }, { body: "b" }]);
    stack.rest.setFault({ kind: "status-500", command: "EVALSHA", times: 1 });
    try {
      expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    } finally {
      stack.rest.setFault(null);
    }
    expect(await stack.direct.llen(`${prefix}:q:wait`)).toBe(2);
  });

  it("reports every message of the failed call, and their redelivery adds them", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({
      queue: "q",
      redis: noRetries(),
      prefix,
      map: (record) => ({ name: "n", data: record.body }),
    });
    const event = sqsEvent([{ body: "a" }, { body: "b" }]);
    stack.rest.setFault({ kind: "status-500", command: "EVALSHA" });
    try {
      const answer = await handler(event, context);
      expect(answer.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(
        event.Records.map((r) => r.messageId),
      );
    } finally {
      stack.rest.setFault(null);
    }
    expect(await stack.direct.exists(`${prefix}:q:wait`)).toBe(0);

    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    expect(await stack.direct.llen(`${prefix}:q:wait`)).toBe(2);
  });

  it("adds 1,000 jobs per call, so a failed call reports only the messages it carried", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({
      queue: "q",
      redis: noRetries(),
      prefix,
      map: (record) => Array.from({ length: 400 }, (_, n) => ({ name: record.body, data: { n } })),
    });
    const event = sqsEvent([{ body: "a" }, { body: "b" }, { body: "c" }]);
    // The first call (messages a and b, 800 jobs) is refused; the second (c, 400 jobs) goes through.
    stack.rest.setFault({ kind: "status-500", command: "EVALSHA", times: 1 });
    const answer = await handler(event, context);
    stack.rest.setFault(null);

    expect(answer.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(
      event.Records.slice(0, 2).map((r) => r.messageId),
    );
    expect(await stack.direct.llen(`${prefix}:q:wait`)).toBe(400);
    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    expect(await stack.direct.llen(`${prefix}:q:wait`)).toBe(1200);
  });
});

describe("sqsProducer on a FIFO queue", () => {
  it("holds back the rest of a message group after a failure, so the retry keeps the group's order", async () => {
    const prefix = uniquePrefix();
    let broken = true;
    const handler = sqsProducer({
      queue: "q",
      redis: sharedRedis(),
      prefix,
      map: (record) => {
        if (broken && record.body === "a2") throw new Error("downstream lookup failed");
        return { name: record.body, data: {} };
      },
    });
    const event = sqsEvent(
      ["a1", "a2", "b1", "a3", "b2"].map((name) => ({
        body: name,
        queueName: "orders.fifo",
        messageGroupId: name.slice(0, 1),
      })),
    );
    const idOf = (i: number) => event.Records[i]?.messageId as string;

    const answer = await handler(event, context);
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([idOf(1), idOf(3)]);

    broken = false;
    const retry = sqsEvent([]);
    retry.Records = [event.Records[1], event.Records[3]] as SQSRecord[];
    expect(await handler(retry, context)).toEqual({ batchItemFailures: [] });
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const names = (await queue.getWaiting()).map((job) => job.name);
    expect(names.filter((n) => n.startsWith("a"))).toEqual(["a1", "a2", "a3"]);
    expect(names.filter((n) => n.startsWith("b"))).toEqual(["b1", "b2"]);
  });
});
