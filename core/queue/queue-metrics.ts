/**
 * The numbers the sweeper publishes as metrics, for every queue of a pass in one script call: counts,
 * paused, dead-letter depth, the oldest waiting job's timestamp, and the jobs nimbusq workers
 * completed and failed since the previous read (the worker calls count them in `{P}nq:counts`; this
 * read resets them, so two readers would split the counts: only the sweeper, under its lock, reads).
 */

import { defaultDeadLetterQueue } from "../dead-letter/redrive.ts";
import { UnexpectedReplyError } from "../errors.ts";
import {
  decodeReadQueueMetrics,
  readQueueMetrics as readQueueMetricsScript,
} from "../redis/generated/scripts.ts";
import { queueKeys } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";

export interface MetricsQueue {
  name: string;
  /** Its dead-letter queue (default `<name>-dlq`), under the same prefix. */
  deadLetterQueue?: string;
}

export interface QueueMetrics {
  queue: string;
  waiting: number;
  prioritized: number;
  delayed: number;
  active: number;
  failed: number;
  paused: boolean;
  deadLetterDepth: number;
  /** When the oldest waiting job was added (ms); undefined when none waits. */
  oldestWaitingAt?: number;
  completedSinceLastRead: number;
  failedSinceLastRead: number;
}

/** Reads every queue's metrics in one call (and resets their finish counters). */
export async function readQueueMetrics(
  port: RedisPort,
  prefix: string,
  queues: readonly MetricsQueue[],
): Promise<QueueMetrics[]> {
  if (queues.length === 0) return [];
  const reply = await runScript(
    port,
    readQueueMetricsScript,
    {
      queues: queues.map((queue) => {
        const keys = queueKeys(prefix, queue.name);
        const deadLetter = queueKeys(prefix, queue.deadLetterQueue ?? defaultDeadLetterQueue(queue.name));
        return { ...keys, counts: keys.finishCounts, deadLetterWait: deadLetter.wait };
      }),
    },
    {},
  );
  const read = decodeReadQueueMetrics(reply).queues;
  if (read.length !== queues.length)
    throw new UnexpectedReplyError("readQueueMetrics: one entry per queue expected");
  return read.map(
    ({ paused, oldestWaitingTimestamp, ...counts }, index): QueueMetrics => ({
      queue: (queues[index] as MetricsQueue).name,
      ...counts,
      paused: paused === 1,
      ...(oldestWaitingTimestamp > 0 ? { oldestWaitingAt: oldestWaitingTimestamp } : {}),
    }),
  );
}
