/**
 * What Queue, Worker, FlowProducer and QueueEvents share at their edges: reading the `redis` option
 * with a clear error for BullMQ's habits (`connection`, no options), and BullMQ's `close()` — idempotent,
 * after which every call is refused with a ClosedError instead of reaching Redis.
 */
import { ClosedError, ValidationError } from "../errors.ts";
import { Checker } from "../validate.ts";
import { checkOptionKeys } from "./option-keys.ts";
import { isClient, type RedisPort, toRedisPort } from "./redis-port.ts";
import type { RedisRetryOptions } from "./retry.ts";
import { isShardMap } from "./shard-map.ts";

const howToConnect =
  "an @upstash/redis client: nimbusq talks to Redis over HTTP, not through ioredis connection options " +
  '— e.g. { redis: createRedis({ url, token }) } with createRedis from "nimbusq"';

/** `options.redis` and `options.retry`, once the options are an object without ioredis `connection`. */
function redisOptionsOf(options: unknown, context: string): { redis: unknown; retry: unknown } {
  if (typeof options !== "object" || options === null)
    throw new ValidationError("options", `an object with redis: ${howToConnect}`, context);
  const { redis, connection, retry } = options as { redis?: unknown; connection?: unknown; retry?: unknown };
  if (redis === undefined && connection !== undefined)
    throw new ValidationError("connection", `replaced by redis: ${howToConnect}`, context);
  return { redis, retry };
}

/** The class a context names (`Worker "email"` → `Worker`), whose option keys are checked. */
const classOf = (context: string) => context.split(" ")[0] as string;

/**
 * The port from a constructor's options. A missing options object, ioredis `connection` options or a
 * `redis` that is not a client get a ValidationError that shows what to pass instead. A shard map
 * (core/redis/shard-map.ts) gives the port of `queueName`'s database.
 */
export function redisPortFrom(
  options: unknown,
  context: string,
  extra: Pick<RedisRetryOptions, "onRetry" | "signal"> = {},
  queueName?: string,
): RedisPort {
  const { redis, retry } = redisOptionsOf(options, context);
  const client = isShardMap(redis) && queueName !== undefined ? redis.redisFor(queueName) : redis;
  if (!isClient(client)) throw new ValidationError("redis", howToConnect, context);
  checkOptionKeys(options as object, classOf(context), context);
  return toRedisPort(client, { ...checkRetry(retry, context), ...extra });
}

/** What redisPortFrom checks of the options, for a FlowProducer over a shard map (no port to make yet). */
export function checkRedisOptions(options: unknown, context: string): void {
  const { retry } = redisOptionsOf(options, context);
  checkOptionKeys(options as object, classOf(context), context);
  checkRetry(retry, context);
}

/** The `retry` option: `{ windowMs?, deadline? }`. */
export function checkRetry(retry: unknown, context: string): RedisRetryOptions {
  if (retry === undefined) return {};
  const check = new Checker(context);
  const given = check.object("retry", retry, ["windowMs", "deadline"]);
  if (given.windowMs !== undefined) check.integer("retry.windowMs", given.windowMs, 0);
  if (given.deadline !== undefined && typeof given.deadline !== "function")
    check.fail("retry.deadline", "a function returning epoch ms", given.deadline);
  return given as RedisRetryOptions;
}

/**
 * Open → closing → closed. `assertOpen` refuses public calls from the first `close()`; the port the
 * object hands to its jobs refuses calls only once closing has finished (a closing worker still acks).
 */
export class Lifecycle {
  private pending: Promise<void> | undefined;
  private done = false;
  private readonly closingController = new AbortController();

  /** Fires when `close()` starts: Redis calls stop retrying, so a close during an outage is prompt. */
  get closingSignal(): AbortSignal {
    return this.closingController.signal;
  }

  constructor(private readonly subject: string) {}

  /** The close under way or done (BullMQ's `closing`), undefined while open. */
  get closing(): Promise<void> | undefined {
    return this.pending;
  }

  /** Throws ClosedError once `close()` was called. */
  assertOpen(operation: string): void {
    if (this.pending) throw new ClosedError(`${this.subject}: ${operation} after close()`);
  }

  /** Runs `finish` once; every call returns the same promise. */
  close(finish: () => Promise<void> = async () => {}): Promise<void> {
    this.closingController.abort();
    this.pending ??= (async () => {
      try {
        await finish();
      } finally {
        this.done = true;
      }
    })();
    return this.pending;
  }

  /** A port that refuses every call after the close has finished (same methods, same brand). */
  guard(port: RedisPort): RedisPort {
    const guarded: Record<string | symbol, unknown> = { ...port };
    for (const [method, call] of Object.entries(port)) {
      if (typeof call !== "function") continue;
      guarded[method] = async (...args: unknown[]) => {
        if (this.done) throw new ClosedError(`${this.subject}: Redis call after close()`);
        return await call.apply(port, args);
      };
    }
    return guarded as unknown as RedisPort;
  }
}
