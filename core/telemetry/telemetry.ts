/**
 * The tracing hook: an interface shaped like BullMQ 6's `Telemetry` (tracer, span, context manager),
 * so an adapter written for BullMQ (`bullmq-otel`'s BullMQOtel) or a small OpenTelemetry wrapper
 * plugs in unchanged. Core depends on no tracing library. Without a `telemetry` option no span object
 * is ever made: every helper here returns at once on `undefined`.
 *
 * Spans: `add <queue>` (Queue.add/addBulk, producer), `call <queue>` (one per worker ack+lease call,
 * client), `process <queue>` (one per job attempt, consumer). Attributes use BullMQ's names.
 */

/** BullMQ's span kinds (OpenTelemetry's numbering). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

/** BullMQ's attribute names (its TelemetryAttributes), plus nimbusq's for what BullMQ has none. */
export const TelemetryAttributes = {
  QueueName: "bullmq.queue.name",
  QueueOperation: "bullmq.queue.operation",
  BulkCount: "bullmq.job.bulk.count",
  JobName: "bullmq.job.name",
  JobId: "bullmq.job.id",
  JobIds: "bullmq.job.ids",
  JobAttemptsMade: "bullmq.job.attempts.made",
  JobFailedReason: "bullmq.job.failed.reason",
  WorkerName: "bullmq.worker.name",
  BulkNames: "bullmq.job.bulk.names",
  FlowName: "bullmq.flow.name",
  /** Jobs a worker call leased (nimbusq's: BullMQ fetches one job per call). */
  LeasedCount: "nimbusq.worker.leased.count",
} as const;

export type AttributeValue = string | number | boolean | string[] | number[] | boolean[];
export type Attributes = Record<string, AttributeValue | undefined>;

export interface Span<Context = unknown> {
  setSpanOnContext(context: Context): Context;
  setAttribute(key: string, value: AttributeValue): void;
  setAttributes(attributes: Attributes): void;
  addEvent(name: string, attributes?: Attributes): void;
  recordException(exception: { name?: string; message?: string; code?: string | number } | string): void;
  end(): void;
}

export interface Tracer<Context = unknown> {
  startSpan(name: string, options?: { kind: SpanKind }, context?: Context): Span<Context>;
}

export interface ContextManager<Context = unknown> {
  with<A extends (...args: never[]) => unknown>(context: Context, fn: A): ReturnType<A>;
  active(): Context;
  getMetadata(context: Context): string;
  fromMetadata(activeContext: Context, metadata: string): Context;
}

/**
 * What `telemetry` options take: BullMQ's Telemetry shape.
 *
 * @example
 * // an adapter written for BullMQ's telemetry option (bullmq's OpenTelemetry package) fits as is
 * const queue = new Queue("email", { redis, telemetry: otelTelemetry });
 */
export interface Telemetry<Context = unknown> {
  tracer: Tracer<Context>;
  contextManager: ContextManager<Context>;
}

/** Starts `<operation> <queue>` as a child of the active context; undefined without telemetry. */
export function startSpan(
  telemetry: Telemetry | undefined,
  kind: SpanKind,
  operation: string,
  queueName: string,
  attributes?: Attributes,
): Span | undefined {
  if (!telemetry) return undefined;
  const span = telemetry.tracer.startSpan(
    queueName ? `${operation} ${queueName}` : operation,
    { kind },
    telemetry.contextManager.active(),
  );
  span.setAttributes({
    [TelemetryAttributes.QueueName]: queueName,
    [TelemetryAttributes.QueueOperation]: operation,
    ...attributes,
  });
  return span;
}

/** Ends a span, recording the error when there is one (its name and message only, never data). */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  if (error !== undefined) {
    const { name, message } = error instanceof Error ? error : { name: "Error", message: String(error) };
    span.recordException({ name, message });
  }
  span.end();
}

/**
 * Runs `fn` inside a span (made active, so spans the callee starts are its children), ending it when
 * `fn` settles. Without telemetry it is `fn()` and nothing else.
 */
export async function traced<T>(
  telemetry: Telemetry | undefined,
  kind: SpanKind,
  operation: string,
  queueName: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!telemetry) return await fn(undefined);
  const span = startSpan(telemetry, kind, operation, queueName, attributes) as Span;
  const context = span.setSpanOnContext(telemetry.contextManager.active());
  try {
    const value = await telemetry.contextManager.with(context, () => fn(span));
    endSpan(span);
    return value;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}

/** Queue.add/addBulk's span: the job name(s) going in, the id(s) the write gave. */
export function tracedAdd<T extends { id: string }>(
  telemetry: Telemetry,
  queueName: string,
  jobs: readonly { name: string }[],
  write: () => Promise<T[]>,
): Promise<T[]> {
  const single = jobs.length === 1;
  const attributes: Attributes = single
    ? { [TelemetryAttributes.JobName]: jobs[0]?.name }
    : { [TelemetryAttributes.BulkCount]: jobs.length };
  return traced(
    telemetry,
    SpanKind.PRODUCER,
    single ? "add" : "addBulk",
    queueName,
    attributes,
    async (span) => {
      const outcomes = await write();
      const ids = outcomes.map((outcome) => outcome.id);
      span?.setAttributes(
        single ? { [TelemetryAttributes.JobId]: ids[0] } : { [TelemetryAttributes.JobIds]: ids },
      );
      return outcomes;
    },
  );
}

/** A worker call's span: the ids it acks, how many (and which) jobs it leased. */
export function tracedCall<T extends { jobs: readonly { id: string }[] }>(
  telemetry: Telemetry,
  queueName: string,
  entries: readonly { id: string }[],
  call: () => Promise<T>,
): Promise<T> {
  const attributes: Attributes = { [TelemetryAttributes.JobIds]: entries.map((entry) => entry.id) };
  return traced(telemetry, SpanKind.CLIENT, "call", queueName, attributes, async (span) => {
    const result = await call();
    span?.setAttributes({
      [TelemetryAttributes.LeasedCount]: result.jobs.length,
      ...(result.jobs.length > 0 ? { "nimbusq.worker.leased.ids": result.jobs.map((job) => job.id) } : {}),
    });
    return result;
  });
}

interface AttemptedJob {
  id: string;
  name: string;
  queueName: string;
  attemptsMade: number;
}

/** A job attempt's span (`process <queue>`), started when the processor is. */
export function attemptSpan(telemetry: Telemetry, job: AttemptedJob): Span | undefined {
  return startSpan(telemetry, SpanKind.CONSUMER, "process", job.queueName, {
    [TelemetryAttributes.JobId]: job.id,
    [TelemetryAttributes.JobName]: job.name,
    [TelemetryAttributes.JobAttemptsMade]: job.attemptsMade,
  });
}

/** Ends an attempt's span with how the attempt ended; a thrown error is recorded by name and message. */
export function endAttemptSpan(
  span: Span | undefined,
  settled: { kind: string; error?: Error } | { stop: { kind: string } },
): void {
  if (!span) return;
  if ("stop" in settled) span.setAttribute("nimbusq.job.attempt.stopped", settled.stop.kind);
  else if (settled.error) {
    span.setAttribute(TelemetryAttributes.JobFailedReason, settled.error.message);
    endSpan(span, settled.error);
    return;
  }
  endSpan(span);
}

/** Runs `fn` with `span` as the active span (spans the processor starts become its children). */
export function withSpan<T>(telemetry: Telemetry, span: Span, fn: () => T): T {
  const context = span.setSpanOnContext(telemetry.contextManager.active());
  return telemetry.contextManager.with(context, fn);
}

/**
 * FlowProducer.add/addBulk's span, as BullMQ names them: `addFlow <root queue>` with the flow's name,
 * or `addBulkFlows` with the count and names; then the ids of every job written.
 */
export function tracedFlows<T extends { id: string }>(
  telemetry: Telemetry | undefined,
  flows: readonly { name: string; queueName: string }[],
  write: () => Promise<T[]>,
): Promise<T[]> {
  const [first] = flows;
  const single = flows.length === 1 && first !== undefined;
  const attributes: Attributes = single
    ? { [TelemetryAttributes.FlowName]: first.name }
    : {
        [TelemetryAttributes.BulkCount]: flows.length,
        [TelemetryAttributes.BulkNames]: flows.map((flow) => flow.name).join(","),
      };
  return traced(
    telemetry,
    SpanKind.PRODUCER,
    single ? "addFlow" : "addBulkFlows",
    single ? first.queueName : "",
    attributes,
    async (span) => {
      const outcomes = await write();
      span?.setAttributes({ [TelemetryAttributes.JobIds]: outcomes.map((outcome) => outcome.id) });
      return outcomes;
    },
  );
}
