/** Tracing: BullMQ's Telemetry shape. */
export {
  type Attributes as TelemetryAttributeValues,
  type ContextManager,
  type Span,
  SpanKind,
  type Telemetry,
  TelemetryAttributes,
  type Tracer,
} from "./telemetry.ts";
