/**
 * Metrics as CloudWatch Embedded Metric Format: one JSON line on stdout per queue and sweeper pass, one
 * per worker invocation; CloudWatch Logs turns them into metrics in the `nimbusq` namespace with the
 * dimension `Queue` — no PutMetricData call, no extra latency. serverless.yml's alarms use exactly
 * these names.
 */
import type { DrainSummary, QueueMetrics } from "../core/index.ts";

export const metricsNamespace = "nimbusq";

type Unit = "Count" | "Seconds" | "Milliseconds" | "None";

/** A queue's state as the sweeper reads it (core's QueueMetrics), with its counts since the last pass. */
export interface QueueMetricValues
  extends Omit<QueueMetrics, "queue" | "completedSinceLastRead" | "failedSinceLastRead"> {
  completedSinceLastPass: number;
  failedSinceLastPass: number;
  stalledRecovered: number;
}

/** One EMF document: the `_aws` metadata, the `Queue` dimension and the values. */
export function emfLine(
  queue: string,
  metrics: [name: string, value: number, unit: Unit][],
  timestamp: number,
  extra: Record<string, string | number> = {},
): string {
  const document: Record<string, unknown> = {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: metricsNamespace,
          Dimensions: [["Queue"]],
          Metrics: metrics.map(([Name, , Unit]) => ({ Name, Unit })),
        },
      ],
    },
    Queue: queue,
    ...extra,
  };
  for (const [name, value] of metrics) document[name] = value;
  return JSON.stringify(document);
}

/** The sweeper's line for one queue. */
export function queueMetricsLine(queue: string, values: QueueMetricValues, now: number): string {
  const age = values.oldestWaitingAt !== undefined ? Math.max(0, (now - values.oldestWaitingAt) / 1000) : 0;
  return emfLine(
    queue,
    [
      ["Waiting", values.waiting, "Count"],
      ["Prioritized", values.prioritized, "Count"],
      ["Delayed", values.delayed, "Count"],
      ["Active", values.active, "Count"],
      ["Failed", values.failed, "Count"],
      ["Paused", values.paused ? 1 : 0, "None"],
      ["DeadLetterDepth", values.deadLetterDepth, "Count"],
      ["OldestWaitingAgeSeconds", Math.round(age * 1000) / 1000, "Seconds"],
      ["CompletedSinceLastPass", values.completedSinceLastPass, "Count"],
      ["FailedSinceLastPass", values.failedSinceLastPass, "Count"],
      ["StalledRecovered", values.stalledRecovered, "Count"],
    ],
    now,
  );
}

/** The worker's line for one invocation, from its drain summary. */
export function workerMetricsLine(
  queue: string,
  summary: DrainSummary,
  processingMs: number,
  now: number,
): string {
  return emfLine(
    queue,
    [
      ["JobsLeased", summary.leased, "Count"],
      ["JobsCompleted", summary.completed, "Count"],
      ["JobsFailed", summary.failed, "Count"],
      ["JobsRetried", summary.retried, "Count"],
      ["LeasesLost", summary.lostLeases, "Count"],
      ["ProcessingMs", Math.round(processingMs), "Milliseconds"],
    ],
    now,
  );
}
