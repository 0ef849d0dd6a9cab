/**
 * Publishes entries to an EventBridge bus with PutEvents: 10 entries a call, failed entries retried
 * a few times, and the indices that still failed reported so the caller can stop its cursor there.
 */
import type { EventBridgeClient, EventBridgeClientConfig } from "@aws-sdk/client-eventbridge";

// The exported types below name no AWS SDK type: the SDK is an optional peer of the package (the
// Lambda runtime ships it), and a .d.ts that imported it would not compile where it is absent.

/** One PutEvents entry, spelled as the SDK's `PutEventsRequestEntry`. */
export interface EventEntry {
  EventBusName?: string;
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Resources?: string[];
  Time?: Date;
  TraceHeader?: string;
}

/** An EventBridge client: the SDK's `EventBridgeClient` (nimbusq only calls its `send`). */
export interface EventBridgeClientLike {
  send(command: never): Promise<unknown>;
}

export interface PublishResult {
  /** Indices (into the entries given) that were not accepted after the retries. */
  failed: number[];
}

export type Publish = (entries: EventEntry[]) => Promise<PublishResult>;

export interface EventPublisherOptions {
  client?: EventBridgeClientLike;
  /** Settings for the client nimbusq creates otherwise (`EventBridgeClientConfig`, e.g. `{ endpoint }`). */
  clientConfig?: Record<string, unknown>;
  /** Retries of failed entries (default 2). */
  retries?: number;
}

export function createEventPublisher(options: EventPublisherOptions = {}): Publish {
  let client = options.client as EventBridgeClient | undefined;
  const retries = options.retries ?? 2;
  return async (entries) => {
    const sdk = await import("@aws-sdk/client-eventbridge");
    client ??= new sdk.EventBridgeClient((options.clientConfig ?? {}) as EventBridgeClientConfig);
    const failed: number[] = [];
    for (let start = 0; start < entries.length; start += 10) {
      let pending = entries.slice(start, start + 10).map((entry, i) => ({ entry, index: start + i }));
      for (let attempt = 0; attempt <= retries && pending.length > 0; attempt++) {
        const result = await client.send(new sdk.PutEventsCommand({ Entries: pending.map((p) => p.entry) }));
        pending = pending.filter(
          (_, i) => result.Entries?.[i]?.ErrorCode !== undefined || !result.Entries?.[i]?.EventId,
        );
      }
      failed.push(...pending.map((p) => p.index));
    }
    return { failed };
  };
}
