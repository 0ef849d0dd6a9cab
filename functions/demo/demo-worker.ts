/**
 * The worker handler of a demo queue, with the settings `npm start` uses for it locally; the key
 * prefix comes from `NIMBUSQ_PREFIX` (default `bull`), Redis from `UPSTASH_REDIS_REST_URL`/`_TOKEN`.
 */
import { workerHandler } from "../worker.ts";
import { demoQueue } from "./demo-queues.ts";

export function demoWorkerHandler(name: string, env: Record<string, string | undefined> = process.env) {
  const queue = demoQueue(name);
  return workerHandler({
    queue: queue.name,
    processor: queue.processor,
    batchSize: queue.batchSize,
    concurrency: queue.concurrency,
    jobTimeoutMs: queue.jobTimeoutMs,
    ...(queue.deadLetter ? { deadLetter: queue.deadLetter } : {}),
    ...(env.NIMBUSQ_PREFIX ? { prefix: env.NIMBUSQ_PREFIX } : {}),
  });
}
