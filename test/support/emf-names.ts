/**
 * The sweeper's per-queue EMF metrics (namespace `nimbusq`, dimension `Queue`): the names the
 * sweeper must emit and the alarms in serverless-alarms.yml may use, written once for both tests.
 */
export const queueMetricNames = [
  "Waiting",
  "Prioritized",
  "Delayed",
  "Active",
  "Failed",
  "Paused",
  "DeadLetterDepth",
  "OldestWaitingAgeSeconds",
  "CompletedSinceLastPass",
  "FailedSinceLastPass",
  "StalledRecovered",
];
