/**
 * The worker handler of a demo queue, with the settings `npm start` uses for it locally; the key
 * prefix comes from `NIMBUSQ_PREFIX` (default `bull`), Redis from `UPSTASH_REDIS_REST_URL`/`_TOKEN`.
 * In your app the import is `nimbusq/functions`.
 */
import { prefixFromEnv, workerHandler } from "../../functions/index.ts";
import { demoQueue } from "./demo-queues.ts";

export function demoWorkerHandler(name: string) {
  const queue = demoQueue(name);
  const prefix = prefixFromEnv();
  return workerHandler({
    queue: queue.name,
    processor: queue.processor,
    batchSize: queue.batchSize,
    concurrency: queue.concurrency,
    jobTimeoutMs: queue.jobTimeoutMs,
    ...(queue.deadLetter ? { deadLetter: queue.deadLetter } : {}),
    ...(prefix ? { prefix } : {}),
  });
}
