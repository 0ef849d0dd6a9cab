import { describe, expect, it } from "vitest";
import { RecordsFailedError, snsProducer } from "../../functions/producers/index.ts";
import { lambdaContext, snsEvent } from "../support/aws-events.ts";
import { directConnectionForFile, sharedRedis, silenceWarnings, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
silenceWarnings();

const context = lambdaContext();

function producer(prefix: string, onRecordError?: "throw" | "skip") {
  return snsProducer({
    queue: "notify",
    redis: sharedRedis(),
    prefix,
    ...(onRecordError ? { onRecordError } : {}),
    map: (record) => ({
      name: record.Sns.Subject ?? "message",
      data: JSON.parse(record.Sns.Message) as unknown,
      opts: { priority: 3 },
    }),
  });
}

describe("snsProducer", () => {
  it("adds one job per notification with ids from the SNS MessageId", async () => {
    const prefix = uniquePrefix();
    const event = snsEvent([{ message: '{"user":"u-1"}', subject: "signup" }]);

    const { jobIds } = await producer(prefix)(event, context);

    const id = `sns-${event.Records[0]?.Sns.MessageId}`;
    expect(jobIds).toEqual([id]);
    expect(await direct.zrange(`${prefix}:notify:prioritized`, 0, -1)).toEqual([id]);
    expect(await direct.hgetall(`${prefix}:notify:${id}`)).toMatchObject({
      name: "signup",
      data: '{"user":"u-1"}',
      priority: "3",
    });
  });

  it("makes no second job when SNS retries the delivery", async () => {
    const prefix = uniquePrefix();
    const event = snsEvent([{ message: "{}" }, { message: "[1]" }]);
    const handler = producer(prefix);

    const first = await handler(event, context);
    expect(await handler(event, context)).toEqual(first);
    expect(await direct.zcard(`${prefix}:notify:prioritized`)).toBe(2);
  });

  it("throws after adding the good records when a map throws, or skips with onRecordError: skip", async () => {
    const prefix = uniquePrefix();
    const event = snsEvent([{ message: "not json" }, { message: '{"ok":true}' }]);
    const good = `sns-${event.Records[1]?.Sns.MessageId}`;

    const error = await producer(prefix)(event, context).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordsFailedError);
    expect((error as RecordsFailedError).failures).toEqual([
      { itemId: event.Records[0]?.Sns.MessageId, stage: "map", error: expect.any(SyntaxError) },
    ]);
    expect(await direct.zrange(`${prefix}:notify:prioritized`, 0, -1)).toEqual([good]);

    expect(await producer(prefix, "skip")(event, context)).toEqual({ jobIds: [good], invalidRecords: [] });
  });
});
