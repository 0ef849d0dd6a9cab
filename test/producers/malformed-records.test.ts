/**
 * Malformed records fail alone (issue 11, point 10): each trigger names the record's index and field,
 * adds the good siblings, writes nothing for the bad record, and never logs the record's contents.
 */
import type { Context } from "aws-lambda";
import { describe, expect, it, vi } from "vitest";
import { ValidationError } from "../../core/index.ts";
import {
  dynamodbStreamProducer,
  eventBridgeProducer,
  s3Producer,
  snsProducer,
  sqsProducer,
} from "../../functions/producers/index.ts";
import {
  dynamodbStreamEvent,
  eventBridgeEvent,
  lambdaContext,
  s3Event,
  snsEvent,
  sqsEvent,
} from "../support/aws-events.ts";
import { keyspaceDigest } from "../support/keyspace.ts";
import { directConnectionForFile, sharedRedis, silenceWarnings, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
silenceWarnings();

const context = lambdaContext();
const secret = "secret-card-4111111111111111";
const warnings = () => vi.mocked(console.warn).mock.calls.map((call) => String(call[0]));
/** Deletes a field from a record of a typed event, as a broken producer or a hand-made event would. */
const drop = (record: unknown, ...path: string[]) => {
  let at = record as Record<string, unknown>;
  for (const part of path.slice(0, -1)) at = at[part] as Record<string, unknown>;
  delete at[path.at(-1) as string];
};

function expectNoContents(): void {
  for (const line of warnings()) expect(line).not.toContain(secret);
}

async function expectUnchanged(prefix: string, run: () => Promise<unknown>): Promise<unknown> {
  const before = await keyspaceDigest(direct, prefix);
  const result = await run();
  expect(await keyspaceDigest(direct, prefix)).toBe(before);
  return result;
}

/** Every key under the prefix except the queue's own structures: the job hashes. */
async function jobKeys(prefix: string, queue: string): Promise<string[]> {
  const keys = await direct.keys(`${prefix}:${queue}:*`);
  const own = new Set(["wait", "events", "meta", "id", "delayed", "prioritized", "pc", "marker"]);
  return keys
    .map((k) => k.slice(`${prefix}:${queue}:`.length))
    .filter((k) => !own.has(k))
    .sort();
}

describe("sqsProducer with malformed records", () => {
  it("reports a record without attributes, drops one without a messageId, and adds the others", async () => {
    const prefix = uniquePrefix();
    const mapped: string[] = [];
    const handler = sqsProducer({
      queue: "q",
      redis: sharedRedis(),
      prefix,
      map: (record) => {
        mapped.push(record.messageId);
        return { name: "n", data: { body: record.body } };
      },
    });
    const event = sqsEvent([{ body: "a" }, { body: secret }, { body: secret }, { body: "d" }]);
    const [good1, noAttributes, noId, good2] = event.Records.map((r) => r.messageId);
    drop(event.Records[1], "attributes");
    drop(event.Records[2], "attributes");
    drop(event.Records[2], "messageId");

    expect(await handler(event, context)).toEqual({ batchItemFailures: [{ itemIdentifier: noAttributes }] });

    expect(mapped).toEqual([good1, good2]);
    expect(await jobKeys(prefix, "q")).toEqual([`sqs-${good1}`, `sqs-${good2}`].sort());
    expect(await direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual([`sqs-${good2}`, `sqs-${good1}`]);
    expect(warnings()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /sqsProducer: record \(no id\) dropped as malformed \(record\): .*Records\[2\]\.messageId must be a non-empty string/,
        ),
        "sqsProducer: 1 of 4 records were malformed and dropped",
        expect.stringMatching(
          new RegExp(
            `record ${noAttributes} reported .*\\(record\\): .*Records\\[1\\]\\.attributes must be an object`,
          ),
        ),
      ]),
    );
    expectNoContents();
    expect(noId).toBeDefined();

    // A batch of only malformed records writes nothing at all.
    const bad = sqsEvent([{ body: secret }]);
    drop(bad.Records[0], "body");
    expect(await expectUnchanged(prefix, () => handler(bad, context))).toEqual({
      batchItemFailures: [{ itemIdentifier: bad.Records[0]?.messageId }],
    });
  });

  it("throws a ValidationError naming event.Records for an event without records, writing nothing", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({ queue: "q", redis: sharedRedis(), prefix, map: () => null });
    const error = await expectUnchanged(prefix, () => handler({} as never, context).catch((e: unknown) => e));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe("sqsProducer: event.Records must be an array of records");
  });
});

describe("s3Producer with malformed records", () => {
  it("lists a record without an object key in invalidRecords, never making an `undefined` id", async () => {
    const prefix = uniquePrefix();
    const handler = s3Producer({
      queue: "t",
      redis: sharedRedis(),
      prefix,
      map: (record) => ({ name: "resize", data: { key: record.s3.object.key } }),
    });
    const event = s3Event([
      { bucket: "b", key: "ok.jpg" },
      { bucket: "b", key: secret },
      { bucket: "b", key: secret, sequencer: null, eventName: "ObjectTagging:Put" },
    ]);
    drop(event.Records[1], "s3", "object", "key");
    drop(event.Records[2], "eventTime");

    const answer = await handler(event, context);

    const okId = `s3-b/ok.jpg@${event.Records[0]?.s3.object.sequencer}`;
    expect(answer).toEqual({
      jobIds: [okId],
      invalidRecords: [
        { index: 1, itemId: undefined, field: "Records[1].s3.object.key" },
        { index: 2, itemId: undefined, field: "Records[2].eventTime" },
      ],
    });
    expect(await jobKeys(prefix, "t")).toEqual([okId]);
    expect(warnings()).toContain("s3Producer: 2 of 3 records were malformed and dropped");
    expectNoContents();

    const bad = s3Event([{ bucket: "b", key: "x" }]);
    drop(bad.Records[0], "s3", "bucket");
    expect(await expectUnchanged(prefix, () => handler(bad, context))).toEqual({
      jobIds: [],
      invalidRecords: [{ index: 0, itemId: undefined, field: "Records[0].s3.bucket" }],
    });
    const error = await expectUnchanged(prefix, () => handler({} as never, context).catch((e: unknown) => e));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe("s3Producer: event.Records must be an array of records");
  });
});

describe("snsProducer with malformed records", () => {
  it("lists a notification without a Message, adds the others, and refuses an event without records", async () => {
    const prefix = uniquePrefix();
    const handler = snsProducer({
      queue: "n",
      redis: sharedRedis(),
      prefix,
      map: (record) => ({ name: "m", data: JSON.parse(record.Sns.Message) as unknown }),
    });
    const event = snsEvent([{ message: "{}" }, { message: JSON.stringify({ secret }) }]);
    drop(event.Records[1], "Sns", "Message");
    const [good, bad] = event.Records.map((r) => r.Sns.MessageId);

    expect(await handler(event, context)).toEqual({
      jobIds: [`sns-${good}`],
      invalidRecords: [{ index: 1, itemId: bad, field: "Records[1].Sns.Message" }],
    });
    expect(await jobKeys(prefix, "n")).toEqual([`sns-${good}`]);
    expect(warnings()).toContainEqual(expect.stringContaining(`record ${bad} dropped as malformed`));
    expectNoContents();

    const noSns = snsEvent([{ message: secret }]);
    drop(noSns.Records[0], "Sns");
    expect(await expectUnchanged(prefix, () => handler(noSns, context))).toMatchObject({
      invalidRecords: [{ index: 0, field: "Records[0].Sns" }],
    });
    await expect(handler({} as never, context)).rejects.toThrow("snsProducer: event.Records must be");
  });
});

describe("dynamodbStreamProducer with malformed records", () => {
  it("drops a record without an identity or a dynamodb section, logging and counting them", async () => {
    const prefix = uniquePrefix();
    const handler = dynamodbStreamProducer({
      queue: "d",
      redis: sharedRedis(),
      prefix,
      map: (record) => ({ name: "sync", data: record.dynamodb?.NewImage ?? null }),
    });
    const image = { pk: { S: secret } };
    const event = dynamodbStreamEvent([
      { keys: { pk: { S: "o-1" } } },
      { keys: image, newImage: image, eventID: null },
      { keys: image, newImage: image },
    ]);
    drop(event.Records[1], "eventSourceARN");
    drop(event.Records[2], "dynamodb");

    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });

    expect(await jobKeys(prefix, "d")).toEqual([`ddb-${event.Records[0]?.eventID}`]);
    expect(warnings()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/Records\[1\]\.eventID must be a non-empty string, or eventSourceARN and/),
        expect.stringMatching(/Records\[2\]\.dynamodb must be an object/),
        "dynamodbStreamProducer: 2 of 3 records were malformed and dropped",
      ]),
    );
    expectNoContents();

    const bad = dynamodbStreamEvent([{ keys: image }]);
    (bad.Records[0] as { dynamodb: unknown }).dynamodb = "not an object";
    expect(await expectUnchanged(prefix, () => handler(bad, context))).toEqual({ batchItemFailures: [] });
    await expect(handler({} as never, context)).rejects.toThrow(
      "dynamodbStreamProducer: event.Records must be an array of records",
    );
  });
});

describe("eventBridgeProducer with a malformed event", () => {
  it("throws a ValidationError naming the field, writing nothing", async () => {
    const prefix = uniquePrefix();
    const handler = eventBridgeProducer({
      queue: "e",
      redis: sharedRedis(),
      prefix,
      map: (event) => ({ name: "n", data: event.detail }),
    });
    await handler(eventBridgeEvent({ detail: { ok: true } }), context as Context);

    const empty = await expectUnchanged(prefix, () => handler({} as never, context).catch((e: unknown) => e));
    expect(empty).toBeInstanceOf(ValidationError);
    expect((empty as Error).message).toBe("eventBridgeProducer: event.id must be a non-empty string");

    const noDetail = eventBridgeEvent({ detail: { secret } });
    drop(noDetail, "detail");
    const error = await expectUnchanged(prefix, () => handler(noDetail, context).catch((e: unknown) => e));
    expect((error as ValidationError).field).toBe("event.detail");
    expect((error as Error).message).not.toContain(secret);
  });
});
