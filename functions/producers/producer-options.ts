/**
 * The options every producer trigger takes, and the queue they name.
 */
import { type HandoffTarget, Queue, type RedisOption } from "../../core/index.ts";
import { checkPrefix, checkQueueName } from "../../core/internal.ts";
import { eventsFromEnv } from "../config/events-env.ts";
import { redisOrEnv } from "../config/redis-env.ts";
import { errorFields, logger } from "../log.ts";
import { retryDeadline } from "../request-deadline.ts";
import type { MapRecord } from "./enqueue-records.ts";

export interface ProducerOptions<R> {
  /** A Queue, or a queue name (then built from `redis`/`prefix`, or UPSTASH_REDIS_REST_URL/_TOKEN). */
  queue: string | Queue;
  /** Only with a queue name; default `createRedis()` from the environment, at the first invocation. */
  redis?: RedisOption;
  /** Only with a queue name; default `bull`. */
  prefix?: string;
  /** Turns one record into a job, several jobs (ids get `#<index>`) or null (the record is skipped). */
  map: MapRecord<R>;
  /** Overrides the id derived from the record's identity; used as given. */
  jobId?: (record: R) => string;
  /**
   * The sweeper's tick (ms; default `NIMBUSQ_TICK_MS`, else 60 000): a delayed job due within it gets
   * a kick with `wakeAt`; a later one is promoted on time by a tick.
   */
  wakeWithinMs?: number;
  /**
   * Starts the queue's worker once an event added jobs ready, instead of at the sweeper's next pass —
   * or, when it added only delayed jobs, the earliest due within the sweeper's tick, with `{ wakeAt }`
   * so the worker waits for it: e.g. `workerKickFromEnv(process.env)`, which skips the invoke when the
   * queue already has its `maxWorkers` running, and hands an event's lone job to the invocation it
   * starts. Off when left out.
   */
  kick?: ((queue: string, hint?: { wakeAt?: number }) => Promise<void>) & {
    /** A kick that offers it (workerKickFromEnv's): an event's lone job goes to the invocation it starts. */
    handoffTarget?: (queue: string) => HandoffTarget | undefined;
  };
}

/**
 * The queue, built once per Lambda container. Without an explicit client it is built at the first
 * invocation, so importing a handler never needs the environment (tests, bundling).
 */
export function queueOf(
  source: string,
  options: Pick<ProducerOptions<unknown>, "queue" | "redis" | "prefix" | "kick">,
): () => Queue {
  const { queue, redis, prefix } = options;
  if (typeof queue !== "string") {
    if (redis !== undefined || prefix !== undefined) {
      throw new TypeError(`${source}: redis and prefix go with a queue name; a Queue brings its own`);
    }
    return () => queue;
  }
  // Checked now, not at the first invocation: a bad name fails the deployment, not every record.
  checkQueueName(queue, source);
  if (prefix !== undefined) checkPrefix(prefix, source);
  const events = eventsFromEnv();
  // Transient failures are retried within the invocation; what still fails is reported per record.
  const retry = { deadline: retryDeadline };
  const target = options.kick?.handoffTarget?.(queue);
  // As the kick's, a failed start is logged and never fails the records: the job waits for the sweeper.
  const handoff = target && {
    ...target,
    onStartError: (error: unknown) =>
      logger.warn(`${source}: starting the worker of queue "${queue}" failed`, errorFields(error)),
  };
  const settings = { prefix, events, retry, ...(handoff ? { handoff } : {}) };
  let built = redis === undefined ? undefined : new Queue(queue, { redis, ...settings });
  return () => {
    built ??= new Queue(queue, { redis: redisOrEnv(redis), ...settings });
    return built;
  };
}
