/**
 * The option keys Queue, Worker, FlowProducer and QueueEvents accept. BullMQ ignores what it does not
 * know, so `{ concurency: 5 }` or BullMQ's `lockDuration` would pass silently and change nothing;
 * here a key no nimbusq class or adapter takes is refused when the object is made, naming the key
 * and what to use instead. One options object is often shared between classes (BullMQ's habit), so
 * a key another nimbusq class takes is let through.
 */
import { ValidationError } from "../errors.ts";

/**
 * Every key of nimbusq's options: Worker, Queue, FlowProducer, QueueEvents, the function worker and
 * workerHandler (test/architecture/option-keys.test.ts holds the list to the interfaces).
 */
export const optionKeys = [
  // shared
  "redis",
  "connection",
  "retry",
  "prefix",
  "events",
  "streams",
  "clock",
  "telemetry",
  // Queue, FlowProducer
  "defaultJobOptions",
  "maxDataBytes",
  "replayGuardTtlMs",
  "wake",
  "handoff",
  // Worker
  "batchSize",
  "concurrency",
  "leaseMs",
  "ack",
  "maxRequestBytes",
  "maxCallsInFlight",
  "limiter",
  "group",
  "name",
  "maxStalledCount",
  "stalledInterval",
  "removeOnComplete",
  "removeOnFail",
  "deadLetter",
  "backoffStrategies",
  "settings",
  "jobTimeoutMs",
  "maxJobTimeoutMs",
  "poll",
  "random",
  // QueueEvents
  "lastEventId",
  "autorun",
  // the function worker and workerHandler
  "queue",
  "processor",
  "safetyMarginMs",
  "maxChain",
  "waitForDelayedMs",
  "onWorker",
  "invoke",
  "output",
] as const;

const known = new Set<string>(optionKeys);

/** BullMQ's options that mean nothing here, by class ("*": any), and what to use instead. */
const bullmqOnly: Record<string, { classes: string[]; instead: string }> = {
  lockDuration: { classes: ["Worker"], instead: "leaseMs sets how long a job's lease lasts" },
  lockRenewTime: { classes: ["Worker"], instead: "a lease is extended every leaseMs / 6 by itself" },
  skipLockRenewal: { classes: ["Worker"], instead: "leases are always extended while a job is held" },
  skipStalledCheck: {
    classes: ["Worker"],
    instead: "the sweeper runs the stalled check (or call worker.recoverStalled())",
  },
  drainDelay: { classes: ["Worker"], instead: "poll: { maxMs } is run()'s longest idle wait" },
  runRetryDelay: { classes: ["Worker"], instead: "poll: { minMs, maxMs } sets run()'s waits" },
  autorun: {
    classes: ["Worker"],
    instead: "nothing starts by itself: call drain() (one invocation) or run() (a container)",
  },
  useWorkerThreads: { classes: ["Worker"], instead: "a processor file already runs in worker threads" },
  metrics: { classes: ["Worker"], instead: "the sweeper's CloudWatch metrics count finished jobs" },
  maxStartedAttempts: { classes: ["Worker"], instead: "attempts (per job) bounds the runs" },
  blockingTimeout: { classes: ["QueueEvents"], instead: "poll: { minMs, maxMs, idleMs } (no blocking read)" },
  skipVersionCheck: { classes: ["*"], instead: "nothing: nimbusq does not check Redis's version" },
  skipMetasUpdate: { classes: ["*"], instead: "nothing: nimbusq writes the queue's meta only when needed" },
  skipWaitingForReady: { classes: ["*"], instead: "nothing: there is no connection to wait for" },
  sharedConnection: { classes: ["*"], instead: "redis (one client is shared as it is)" },
  blockingConnection: { classes: ["*"], instead: "redis (no blocking command is ever sent)" },
};

/** The known key nearest to a typo (at most two edits away), if any. */
function nearest(key: string): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0] as number;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const kept = row[j] as number;
        row[j] = Math.min(kept + 1, (row[j - 1] as number) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
        previous = kept;
      }
    }
    return row[b.length] as number;
  };
  let best: { key: string; distance: number } | undefined;
  for (const candidate of optionKeys) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d <= 2 && (!best || d < best.distance)) best = { key: candidate, distance: d };
  }
  return best?.key;
}

/** Refuses a key no nimbusq class takes (`className`: "Worker", "Queue", …; `context` for the message). */
export function checkOptionKeys(options: object, className: string, context: string): void {
  for (const key of Object.keys(options)) {
    const bullmq = bullmqOnly[key];
    const meaningless = bullmq && (bullmq.classes.includes("*") || bullmq.classes.includes(className));
    if (known.has(key) && !meaningless) continue;
    if (bullmq) throw new ValidationError(key, `left out: a BullMQ option; here ${bullmq.instead}`, context);
    const suggestion = nearest(key);
    throw new ValidationError(
      key,
      `left out: no nimbusq option has that name${suggestion ? ` (did you mean ${suggestion}?)` : ""}`,
      context,
    );
  }
}
