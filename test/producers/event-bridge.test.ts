import { describe, expect, it } from "vitest";
import { eventBridgeProducer, RecordsFailedError } from "../../functions/producers/index.ts";
import { eventBridgeEvent, lambdaContext } from "../support/aws-events.ts";
import { directConnectionForFile, sharedRedis, silenceWarnings, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
silenceWarnings();

const context = lambdaContext();
type OrderPlaced = { orderId: string; lines: number[] };

function producer(prefix: string, onRecordError?: "throw" | "skip") {
  return eventBridgeProducer<string, OrderPlaced>({
    queue: "orders",
    redis: sharedRedis(),
    prefix,
    ...(onRecordError ? { onRecordError } : {}),
    map: (event) => {
      if (event.detail.lines.length === 0) throw new Error("an order without lines");
      return event.detail.lines.map((sku) => ({
        name: "pick",
        data: { orderId: event.detail.orderId, sku },
        opts: { delay: 60_000 },
      }));
    },
  });
}

describe("eventBridgeProducer", () => {
  it("adds the event's jobs with the event id and an index, in BullMQ's layout", async () => {
    const prefix = uniquePrefix();
    const event = eventBridgeEvent({ detail: { orderId: "o-1", lines: [11, 12] } });

    const { jobIds } = await producer(prefix)(event, context);

    expect(jobIds).toEqual([`eb-${event.id}#0`, `eb-${event.id}#1`]);
    expect(await direct.zrange(`${prefix}:orders:delayed`, 0, -1)).toEqual(jobIds);
    const hash = await direct.hgetall(`${prefix}:orders:${jobIds[1]}`);
    expect(hash).toMatchObject({ name: "pick", data: '{"orderId":"o-1","sku":12}', delay: "60000" });
  });

  it("makes no second job when the event is delivered again, and new ones for a replay", async () => {
    const prefix = uniquePrefix();
    const event = eventBridgeEvent({ detail: { orderId: "o-1", lines: [11] } });
    const handler = producer(prefix);

    const first = await handler(event, context);
    expect(await handler(event, context)).toEqual(first);
    const replayed = await handler({ ...event, "replay-name": "backfill-2026" }, context);

    expect(replayed.jobIds).toEqual([`eb-${event.id}@backfill-2026#0`]);
    expect(await direct.zcard(`${prefix}:orders:delayed`)).toBe(2);
  });

  it("throws when map throws, and skips the event with onRecordError: skip", async () => {
    const prefix = uniquePrefix();
    const event = eventBridgeEvent({ detail: { orderId: "o-1", lines: [] } });

    await expect(producer(prefix)(event, context)).rejects.toThrow(RecordsFailedError);
    expect(await producer(prefix, "skip")(event, context)).toEqual({ jobIds: [] });
    expect(console.warn).toHaveBeenCalledWith(expect.stringContaining(`record ${event.id} skipped (map)`));
  });
});
