/**
 * Publishes entries to an EventBridge bus with PutEvents: 10 entries a call, failed entries retried
 * a few times, and the indices that still failed reported so the caller can stop its cursor there.
 */
import type { EventBridgeClient, PutEventsRequestEntry } from "@aws-sdk/client-eventbridge";

export interface PublishResult {
  /** Indices (into the entries given) that were not accepted after the retries. */
  failed: number[];
}

export type Publish = (entries: PutEventsRequestEntry[]) => Promise<PublishResult>;

export interface EventPublisherOptions {
  client?: EventBridgeClient;
  clientConfig?: ConstructorParameters<typeof EventBridgeClient>[0];
  /** Retries of failed entries (default 2). */
  retries?: number;
}

export function createEventPublisher(options: EventPublisherOptions = {}): Publish {
  let client: EventBridgeClient | undefined = options.client;
  const retries = options.retries ?? 2;
  return async (entries) => {
    const sdk = await import("@aws-sdk/client-eventbridge");
    client ??= new sdk.EventBridgeClient(options.clientConfig ?? {});
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
