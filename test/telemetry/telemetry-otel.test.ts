/**
 * The tracing hook with a real OpenTelemetry implementation: bullmq-otel's BullMQOtel (the BullMQ
 * team's adapter for BullMQ's `telemetry` option) passed as is to nimbusq's Queue, FlowProducer and
 * Worker, over the OpenTelemetry SDK with an in-memory exporter and the AsyncLocalStorage context
 * manager. Asserts the exported spans: names, kinds, BullMQ's attributes, the failed attempt's
 * exception, and parent links wherever core makes a span active.
 */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { BullMQOtel } from "bullmq-otel";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FlowProducer, Queue, type Telemetry, Worker } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

/** bullmq-otel's class, typed as nimbusq's option: this line fails to compile if the shapes drift. */
function otel(): Telemetry {
  return new BullMQOtel({ tracerName: "nimbusq-test", version: "1.0.0" });
}

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan | undefined): string | undefined => span?.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan | undefined): string | undefined => span?.spanContext().spanId;

describe("telemetry through bullmq-otel and the OpenTelemetry SDK", () => {
  it("Queue.add and addBulk export producer spans with BullMQ's attributes, children of the active span", async () => {
    const prefix = uniquePrefix("otel");
    const queue = new Queue("email", { redis: sharedRedis(), prefix, telemetry: otel() });
    const tracer = trace.getTracer("app");
    const job = await tracer.startActiveSpan("request", async (request) => {
      const added = await queue.add("welcome", { to: "a" }, { jobId: "j1" });
      request.end();
      return added;
    });
    const bulk = await queue.addBulk([
      { name: "n", data: 1 },
      { name: "n", data: 2 },
    ]);

    expect(spans().map((span) => [span.name, span.kind])).toEqual([
      ["add email", SpanKind.PRODUCER],
      ["request", SpanKind.INTERNAL],
      ["addBulk email", SpanKind.PRODUCER],
    ]);
    const [add] = named("add email");
    const [request] = named("request");
    const [addBulk] = named("addBulk email");
    expect(add?.instrumentationScope).toMatchObject({ name: "nimbusq-test", version: "1.0.0" });
    expect(add?.attributes).toEqual({
      "bullmq.queue.name": "email",
      "bullmq.queue.operation": "add",
      "bullmq.job.name": "welcome",
      "bullmq.job.id": job.id,
    });
    expect(job.id).toBe("j1");
    expect(parentOf(add)).toBe(idOf(request));
    expect(add?.spanContext().traceId).toBe(request?.spanContext().traceId);
    expect(add?.status.code).toBe(SpanStatusCode.UNSET);
    expect(addBulk?.attributes).toEqual({
      "bullmq.queue.name": "email",
      "bullmq.queue.operation": "addBulk",
      "bullmq.job.bulk.count": 2,
      "bullmq.job.ids": bulk.map((b) => b.id),
    });
    expect(parentOf(addBulk)).toBeUndefined();
  });

  it("FlowProducer.add and addBulk export BullMQ's addFlow and addBulkFlows spans", async () => {
    const prefix = uniquePrefix("otel");
    const flows = new FlowProducer({ redis: sharedRedis(), prefix, telemetry: otel() });
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
    expect(spans().map((span) => [span.name, span.kind])).toEqual([
      ["addFlow reports", SpanKind.PRODUCER],
      ["addBulkFlows", SpanKind.PRODUCER],
    ]);
    const [addFlow, addBulkFlows] = spans();
    expect(addFlow?.attributes).toEqual({
      "bullmq.queue.name": "reports",
      "bullmq.queue.operation": "addFlow",
      "bullmq.flow.name": "report",
      "bullmq.job.ids": [tree.job.id, tree.children?.[0]?.job.id],
    });
    expect(addBulkFlows?.attributes).toMatchObject({
      "bullmq.queue.operation": "addBulkFlows",
      "bullmq.job.bulk.count": 2,
      "bullmq.job.bulk.names": "a,b",
      "bullmq.job.ids": [expect.any(String), expect.any(String)],
    });
  });

  it("a drain exports client call spans and one consumer span per attempt; the processor's spans are its children", async () => {
    const prefix = uniquePrefix("otel");
    const queue = new Queue("email", { redis: sharedRedis(), prefix });
    await queue.add("welcome", { to: "a" }, { jobId: "bad" });
    await queue.addBulk([
      { name: "digest", data: 1, opts: { jobId: "ok1" } },
      { name: "digest", data: 2, opts: { jobId: "ok2" } },
    ]);
    expect(spans()).toEqual([]); // the queue has no telemetry: nothing traced

    const inside = trace.getTracer("processor");
    const worker = new Worker(
      "email",
      async (job) => {
        const span = inside.startSpan(`render ${job.id}`);
        span.end();
        if (job.name === "welcome") throw new TypeError("no template");
        return "ok";
      },
      { redis: sharedRedis(), prefix, telemetry: otel(), batchSize: 10 },
    );
    expect(await worker.drain()).toMatchObject({ completed: 2, failed: 1 });

    const process = named("process email");
    expect(process.map((span) => span.attributes["bullmq.job.id"]).sort()).toEqual(["bad", "ok1", "ok2"]);
    for (const span of process) {
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(span.ended).toBe(true);
      expect(span.attributes).toMatchObject({
        "bullmq.queue.name": "email",
        "bullmq.queue.operation": "process",
        "bullmq.job.attempts.made": 0,
      });
      // the processor ran with the process span active: its own span is that span's child
      const [render] = named(`render ${span.attributes["bullmq.job.id"]}`);
      expect(parentOf(render)).toBe(idOf(span));
      expect(render?.spanContext().traceId).toBe(span.spanContext().traceId);
    }

    const failed = process.find((span) => span.attributes["bullmq.job.id"] === "bad");
    expect(failed?.attributes).toMatchObject({
      "bullmq.job.name": "welcome",
      "bullmq.job.failed.reason": "no template",
    });
    expect(failed?.events.map((event) => [event.name, event.attributes])).toEqual([
      ["exception", { "exception.type": "TypeError", "exception.message": "no template" }],
    ]);
    // BullMQ's Span shape has no setStatus: an exception is recorded, the status stays UNSET (as in BullMQ)
    expect(failed?.status.code).toBe(SpanStatusCode.UNSET);
    for (const span of process.filter((s) => s !== failed)) {
      expect(span.events).toEqual([]);
      expect(span.attributes["bullmq.job.failed.reason"]).toBeUndefined();
    }

    const calls = named("call email");
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const span of calls) expect(span.kind).toBe(SpanKind.CLIENT);
    expect(calls[0]?.attributes).toMatchObject({
      "bullmq.queue.name": "email",
      "bullmq.queue.operation": "call",
      "bullmq.job.ids": [],
      "nimbusq.worker.leased.count": 3,
    });
    expect([...((calls[0]?.attributes["nimbusq.worker.leased.ids"] ?? []) as string[])].sort()).toEqual([
      "bad",
      "ok1",
      "ok2",
    ]);
    expect(calls.flatMap((span) => span.attributes["bullmq.job.ids"] as string[]).sort()).toEqual([
      "bad",
      "ok1",
      "ok2",
    ]);
    expect(
      spans().every(
        (span) => ["call email", "process email"].includes(span.name) || span.name.startsWith("render "),
      ),
    ).toBe(true);
    expect(spans()).toHaveLength(calls.length + 6);
  });
});
