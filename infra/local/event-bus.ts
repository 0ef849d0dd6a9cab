/** Plays the EventBridge bus locally: logs each forwarded event and keeps the latest ones. */
import type { PutEventsRequestEntry } from "@aws-sdk/client-eventbridge";
import type { Publish } from "../../functions/aws/event-publisher.ts";

export interface LocalEventBus {
  publish: Publish;
  recent: PutEventsRequestEntry[];
}

export function localEventBus(log: (line: string) => void, keep = 500): LocalEventBus {
  const recent: PutEventsRequestEntry[] = [];
  return {
    recent,
    publish: async (entries) => {
      for (const entry of entries) {
        const detail = JSON.parse(entry.Detail ?? "{}") as { queue?: string; jobId?: string; name?: string };
        log(
          `${entry.DetailType} ${detail.queue}${detail.jobId ? `#${detail.jobId}` : ""}${detail.name ? ` (${detail.name})` : ""}`,
        );
        recent.push(entry);
      }
      recent.splice(0, Math.max(0, recent.length - keep));
      return { failed: [] };
    },
  };
}
