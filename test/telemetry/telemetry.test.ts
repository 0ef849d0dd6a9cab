/**
 * The telemetry hook with a small in-memory Telemetry (a real recorder of spans, BullMQ's shape):
 * span names, kinds, attributes and parents for add, the worker's calls and each attempt.
 */
import { describe, expect, it } from "vitest";
import { FlowProducer, Queue, type Span, type Telemetry, Worker } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

interface Recorded {
  name: string;
  kind: number | undefined;
  parent: Recorded | undefined;
  attributes: Record<string, unknown>;
  exceptions: unknown[];
  ended: boolean;
}

function recorder() {
  const spans: Recorded[] = [];
  let active: Recorded | undefined;
  const telemetry: Telemetry<Recorded | undefined> = {
    tracer: {
      startSpan(name, options, context) {
        const record: Recorded = {
          name,
          kind: options?.kind,
          parent: context,
          attributes: {},
          exceptions: [],
          ended: false,
        };
        spans.push(record);
        const span: Span<Recorded | undefined> = {
          setSpanOnContext: () => record,
          setAttribute: (key, value) => {
            record.attributes[key] = value;
          },
          setAttributes: (attributes) => void Object.assign(record.attributes, attributes),
          addEvent: () => {},
          recordException: (exception) => void record.exceptions.push(exception),
          end: () => {
            record.ended = true;
          },
        };
        return span;
      },
    },
    contextManager: {
      active: () => active,
      with(context, fn) {
        const previous = active;
        active = context;
        try {
          return fn() as ReturnType<typeof fn>;
        } finally {
          active = previous;
        }
      },
      getMetadata: () => "",
      fromMetadata: (context) => context,
    },
  };
  return { spans, telemetry: telemetry as Telemetry };
}

describe("telemetry", () => {
  it("add, addBulk, the worker's calls and each attempt make spans with BullMQ's attributes", async () => {
    const prefix = uniquePrefix("tel");
    const { spans, telemetry } = recorder();
    const queue = new Queue("email", { redis: sharedRedis(), prefix, telemetry });
    const job = await queue.add("welcome", { to: "a" }, { jobId: "j1" });
    await queue.addBulk([
      { name: "n", data: 1 },
      { name: "n", data: 2 },
    ]);
    expect(spans.map((s) => [s.name, s.kind, s.ended])).toEqual([
      ["add email", 3, true],
      ["addBulk email", 3, true],
    ]);
    expect(spans[0]?.attributes).toMatchObject({
      "bullmq.queue.name": "email",
      "bullmq.queue.operation": "add",
      "bullmq.job.name": "welcome",
      "bullmq.job.id": job.id,
    });
    expect(spans[1]?.attributes).toMatchObject({
      "bullmq.job.bulk.count": 2,
      "bullmq.job.ids": [expect.any(String), expect.any(String)],
    });

    spans.length = 0;
    const worker = new Worker(
      "email",
      async (j) => {
        if (j.name === "welcome") throw new Error("no");
        return "ok";
      },
      { redis: sharedRedis(), prefix, telemetry, batchSize: 10 },
    );
    const summary = await worker.drain();
    expect(summary).toMatchObject({ completed: 2, failed: 1 });
    const process = spans.filter((s) => s.name === "process email");
    expect(process.map((s) => s.attributes["bullmq.job.id"]).sort()).toHaveLength(3);
    for (const s of process)
      expect(s).toMatchObject({ kind: 4, ended: true, attributes: { "bullmq.job.attempts.made": 0 } });
    expect(process.find((s) => s.exceptions.length > 0)?.exceptions).toEqual([
      { name: "Error", message: "no" },
    ]);
    const calls = spans.filter((s) => s.name === "call email");
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const s of calls) expect(s).toMatchObject({ kind: 2, ended: true });
    expect(calls[0]?.attributes).toMatchObject({ "bullmq.job.ids": [], "nimbusq.worker.leased.count": 3 });
    expect(calls.flatMap((s) => s.attributes["bullmq.job.ids"] as string[]).sort()).toEqual(
      process.map((s) => s.attributes["bullmq.job.id"]).sort(),
    );
    expect(spans.every((s) => s.name === "call email" || s.name === "process email")).toBe(true);
  });

  it("FlowProducer.add and addBulk make BullMQ's addFlow and addBulkFlows spans", async () => {
    const prefix = uniquePrefix("tel");
    const { spans, telemetry } = recorder();
    const flows = new FlowProducer({ redis: sharedRedis(), prefix, telemetry });
    const tree = await flows.add({
      name: "report",
      queueName: "reports",
      data: {},
      children: [{ name: "part", queueName: "parts", data: {} }],
    });
    await flows.addBulk([
      { name: "a", queueName: "reports", data: {} },
      { name: "b", queueName: "reports", data: {} },
    ]);
    expect(spans.map((s) => [s.name, s.kind, s.ended])).toEqual([
      ["addFlow reports", 3, true],
      ["addBulkFlows", 3, true],
    ]);
    expect(spans[0]?.attributes).toMatchObject({
      "bullmq.flow.name": "report",
      "bullmq.queue.operation": "addFlow",
      "bullmq.job.ids": [tree.job.id, tree.children?.[0]?.job.id],
    });
    expect(spans[1]?.attributes).toMatchObject({
      "bullmq.job.bulk.count": 2,
      "bullmq.job.bulk.names": "a,b",
    });
  });

  it("without telemetry nothing is traced (and nothing asks for a tracer)", async () => {
    const prefix = uniquePrefix("tel");
    const queue = new Queue("email", { redis: sharedRedis(), prefix });
    await queue.add("x", {});
    const worker = new Worker("email", async () => "ok", { redis: sharedRedis(), prefix });
    expect((await worker.drain()).completed).toBe(1);
    expect(worker.context.telemetry).toBeUndefined();
  });
});
