import { describe, expect, it } from "vitest";
import { RecordsFailedError, s3ObjectKey, s3Producer } from "../../functions/producers/index.ts";
import { lambdaContext, s3Event } from "../support/aws-events.ts";
import { directConnectionForFile, sharedRedis, silenceWarnings, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
silenceWarnings();

const context = lambdaContext();

function producer(prefix: string, options: { onRecordError?: "throw" | "skip" } = {}) {
  return s3Producer({
    queue: "thumbnails",
    redis: sharedRedis(),
    prefix,
    ...options,
    map: (record) => {
      const key = s3ObjectKey(record);
      if (key.endsWith(".exe")) throw new Error("refusing executables");
      return { name: "resize", data: { bucket: record.s3.bucket.name, key }, opts: { attempts: 2 } };
    },
  });
}

describe("s3Producer", () => {
  it("adds one job per object event, with ids from bucket, key and sequencer", async () => {
    const prefix = uniquePrefix();
    const event = s3Event([
      { bucket: "photos", key: "2026/cat+pic.jpg", sequencer: "0062E99A88DC407460" },
      { bucket: "photos", key: "a:b:c%20d#1.png", sequencer: "0062E99A88DC407461", versionId: "v1" },
    ]);

    const { jobIds } = await producer(prefix)(event, context);

    expect(jobIds).toEqual([
      "s3-photos/2026/cat+pic.jpg@0062E99A88DC407460",
      "s3-photos/a%3Ab%3Ac%2520d%231.png@0062E99A88DC407461",
    ]);
    expect(await direct.lrange(`${prefix}:thumbnails:wait`, 0, -1)).toEqual([...jobIds].reverse());
    const hash = await direct.hgetall(`${prefix}:thumbnails:${jobIds[0]}`);
    expect(hash).toMatchObject({ name: "resize", data: '{"bucket":"photos","key":"2026/cat pic.jpg"}' });
    expect(JSON.parse(hash.opts as string)).toMatchObject({ attempts: 2, jobId: jobIds[0] });
  });

  it("makes no second job when S3 delivers the same event again", async () => {
    const prefix = uniquePrefix();
    const event = s3Event([{ bucket: "photos", key: "dog.jpg" }]);
    const handler = producer(prefix);

    const first = await handler(event, context);
    const again = await handler(structuredClone(event), context);

    expect(again).toEqual(first);
    expect(await direct.llen(`${prefix}:thumbnails:wait`)).toBe(1);
  });

  it("tells apart a version's creation and its deletion, and events without a sequencer", async () => {
    const prefix = uniquePrefix();
    const handler = s3Producer({
      queue: "audit",
      redis: sharedRedis(),
      prefix,
      map: (record) => ({ name: record.eventName, data: {} }),
    });
    const event = s3Event([
      { bucket: "b", key: "doc", versionId: "v1", sequencer: "01" },
      { bucket: "b", key: "doc", versionId: "v1", sequencer: "02", eventName: "ObjectRemoved:Delete" },
      {
        bucket: "b",
        key: "doc",
        versionId: "v1",
        sequencer: null,
        eventName: "ObjectTagging:Put",
        eventTime: "2026-03-01T10:00:00.000Z",
      },
    ]);

    const { jobIds } = await handler(event, context);

    expect(jobIds).toEqual([
      "s3-b/doc@01",
      "s3-b/doc@02",
      "s3-b/doc@v1@ObjectTagging%3APut@2026-03-01T10%3A00%3A00.000Z",
    ]);
    expect(await direct.llen(`${prefix}:audit:wait`)).toBe(3);
  });

  it("hashes an identity too long for a job id", async () => {
    const prefix = uniquePrefix();
    const event = s3Event([{ bucket: "b", key: "k".repeat(1024), sequencer: "0A" }]);
    const { jobIds } = await producer(prefix)(event, context);
    expect(jobIds[0]).toMatch(/^s3#[0-9a-f]{64}$/);
    expect(await direct.hget(`${prefix}:thumbnails:${jobIds[0]}`, "name")).toBe("resize");
  });

  it("throws after adding the good records when a map throws, so Lambda retries the event", async () => {
    const prefix = uniquePrefix();
    const event = s3Event([
      { bucket: "b", key: "ok.jpg" },
      { bucket: "b", key: "bad.exe" },
    ]);
    const handler = producer(prefix);

    const error = await handler(event, context).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RecordsFailedError);
    expect(error).toMatchObject({
      name: "RecordsFailedError",
      message: expect.stringMatching(
        /1 of 2 records were not added \(first: record b\/bad\.exe@\S+, Error \(message withheld/,
      ),
      failures: [{ stage: "map", itemId: expect.stringContaining("b/bad.exe@") }],
    });
    expect((error as Error).message).not.toContain("refusing executables");
    expect(((error as Error).cause as Error).message).toBe("refusing executables");
    const okId = `s3-b/ok.jpg@${event.Records[0]?.s3.object.sequencer}`;
    expect(await direct.lrange(`${prefix}:thumbnails:wait`, 0, -1)).toEqual([okId]);
    // The retry of the whole event finds the good record's job: still one job.
    await expect(handler(event, context)).rejects.toThrow(RecordsFailedError);
    expect(await direct.lrange(`${prefix}:thumbnails:wait`, 0, -1)).toEqual([okId]);
  });

  it("logs and drops the record with onRecordError: skip", async () => {
    const prefix = uniquePrefix();
    const event = s3Event([
      { bucket: "b", key: "bad.exe" },
      { bucket: "b", key: "ok.jpg" },
    ]);

    const { jobIds } = await producer(prefix, { onRecordError: "skip" })(event, context);

    expect(jobIds).toEqual([`s3-b/ok.jpg@${event.Records[1]?.s3.object.sequencer}`]);
    expect(console.warn).toHaveBeenCalledWith(expect.stringMatching(/record b\/bad\.exe@.* skipped \(map\)/));
  });
});
