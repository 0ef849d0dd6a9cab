import type { DynamoDBRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { Queue } from "../../core/index.ts";
import { dynamodbStreamProducer, RecordsFailedError } from "../../functions/producers/index.ts";
import { dynamodbStreamEvent, lambdaContext } from "../support/aws-events.ts";
import { directConnectionForFile, sharedRedis, silenceWarnings, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
silenceWarnings();

const context = lambdaContext();
const orderId = (record: DynamoDBRecord) => record.dynamodb?.Keys?.pk?.S as string;
const status = (record: DynamoDBRecord) => record.dynamodb?.NewImage?.status?.S;

function change(pk: string, newStatus: string, eventName: "INSERT" | "MODIFY" | "REMOVE" = "MODIFY") {
  return { eventName, keys: { pk: { S: pk } }, newImage: { pk: { S: pk }, status: { S: newStatus } } };
}

function producer(prefix: string, onRecordError?: "report" | "throw" | "skip") {
  return dynamodbStreamProducer({
    queue: "orders",
    redis: sharedRedis(),
    prefix,
    ...(onRecordError ? { onRecordError } : {}),
    map: (record) => {
      if (record.eventName === "REMOVE") return null;
      if (status(record) === "corrupt") throw new Error("unreadable image");
      return { name: "sync", data: { orderId: orderId(record), status: status(record) } };
    },
  });
}

describe("dynamodbStreamProducer", () => {
  it("adds one job per change with ids from eventID, skipping what map returns null for", async () => {
    const prefix = uniquePrefix();
    const event = dynamodbStreamEvent([
      change("o-1", "placed", "INSERT"),
      { eventName: "REMOVE", keys: { pk: { S: "o-0" } } },
      change("o-2", "paid"),
    ]);
    const [first, , third] = event.Records.map((r) => `ddb-${r.eventID}`);

    expect(await producer(prefix)(event, context)).toEqual({ batchItemFailures: [] });

    expect(await direct.lrange(`${prefix}:orders:wait`, 0, -1)).toEqual([third, first]);
    expect(await direct.hgetall(`${prefix}:orders:${first}`)).toMatchObject({
      name: "sync",
      data: '{"orderId":"o-1","status":"placed"}',
    });
  });

  it("makes no second job when the batch is delivered again", async () => {
    const prefix = uniquePrefix();
    const event = dynamodbStreamEvent([change("o-1", "placed"), change("o-2", "paid")]);
    const handler = producer(prefix);
    await handler(event, context);
    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    expect(await direct.llen(`${prefix}:orders:wait`)).toBe(2);
  });

  it("derives the id from the stream and sequence number when a record has no eventID", async () => {
    const prefix = uniquePrefix();
    const event = dynamodbStreamEvent([{ ...change("o-1", "placed"), eventID: null, sequenceNumber: "700" }]);
    await producer(prefix)(event, context);
    const arn = String(event.Records[0]?.eventSourceARN).replaceAll(":", "%3A");
    expect(await direct.lrange(`${prefix}:orders:wait`, 0, -1)).toEqual([`ddb-${arn}@700`]);
  });

  it("reports failed records by sequence number and holds back later changes of the same item", async () => {
    const prefix = uniquePrefix();
    const event = dynamodbStreamEvent([
      change("o-1", "placed"),
      change("o-1", "corrupt"),
      change("o-2", "placed"),
      change("o-1", "shipped"),
    ]);
    const sequence = (i: number) => event.Records[i]?.dynamodb?.SequenceNumber;

    const answer = await producer(prefix)(event, context);

    expect(answer).toEqual({
      batchItemFailures: [{ itemIdentifier: sequence(1) }, { itemIdentifier: sequence(3) }],
    });
    const queue = new Queue("orders", { redis: sharedRedis(), prefix });
    expect((await queue.getWaiting()).map((job) => job.data)).toEqual([
      { orderId: "o-1", status: "placed" },
      { orderId: "o-2", status: "placed" },
    ]);
  });

  it("throws with onRecordError: throw, after adding the good records", async () => {
    const prefix = uniquePrefix();
    const event = dynamodbStreamEvent([change("o-1", "corrupt"), change("o-2", "paid")]);
    await expect(producer(prefix, "throw")(event, context)).rejects.toBeInstanceOf(RecordsFailedError);
    expect(await direct.lrange(`${prefix}:orders:wait`, 0, -1)).toEqual([`ddb-${event.Records[1]?.eventID}`]);
  });

  it("drops the record and holds nothing back with onRecordError: skip", async () => {
    const prefix = uniquePrefix();
    const event = dynamodbStreamEvent([change("o-1", "corrupt"), change("o-1", "paid")]);
    expect(await producer(prefix, "skip")(event, context)).toEqual({ batchItemFailures: [] });
    expect(await direct.lrange(`${prefix}:orders:wait`, 0, -1)).toEqual([`ddb-${event.Records[1]?.eventID}`]);
    expect(console.warn).toHaveBeenCalledOnce();
  });
});
