/**
 * BullMQ's QueueEvents without a connection: reads the queue's events stream over Redis's HTTP API
 * with non-blocking reads (one XRANGE per poll, an adaptive interval) and emits BullMQ 6.7.0's events
 * with its payloads and listener signatures.
 */

import { ClosedError, QueueStateError } from "../errors.ts";
import { defaultPrefix, queueKeys } from "../redis/keys.ts";
import { redisPortFrom } from "../redis/lifecycle.ts";
import type { RedisRetryOptions } from "../redis/retry.ts";
import type { RedisOption } from "../redis/shard-map.ts";
import type { EventsLevel } from "../types.ts";
import { Checker, checkPrefix, checkQueueName } from "../validate.ts";
import { Emitter } from "./emitter.ts";
import type { AnyListener, QueueEventsJobListener, QueueEventsListener } from "./queue-events-listeners.ts";
import {
  completeEventId,
  decodeEvent,
  isEventId,
  newestEventId,
  nextPollDelay,
  type PollBounds,
  readEventsAfter,
  streamPort,
} from "./queue-events-stream.ts";

export type { QueueEventsJobListener, QueueEventsListener } from "./queue-events-listeners.ts";

export interface QueueEventsOptions {
  /** An `@upstash/redis` client built with `automaticDeserialization: false` (see `createRedis`). */
  redis: RedisOption;
  /**
   * How long transient Redis failures (a restart, a failover, a 5xx, a lost answer) are retried with
   * the same request before a call fails (`windowMs`, default 30 000; 0: the client's own retries
   * only), and never past `deadline()` (epoch ms). See core/redis/retry.ts.
   */
  retry?: RedisRetryOptions;
  /** Key prefix, `bull` by default (BullMQ's default). */
  prefix?: string;
  /**
   * Where to start: `$` (default) for events written after the start only, `0-0` for the whole
   * stream, or a stream id to resume after (e.g. a saved `queueEvents.lastEventId`).
   */
  lastEventId?: string;
  /** Start reading at once (default true, as BullMQ); otherwise call `run()`. */
  autorun?: boolean;
  /**
   * The queue's events level, as its producers' and workers' (`events`, or `NIMBUSQ_EVENTS`): `none`
   * writes no job event, so a QueueEvents for it is refused instead of waiting forever.
   */
  events?: EventsLevel;
  /**
   * The adaptive interval: `minMs` (default 100) between reads while events flow, doubling while the
   * stream is idle up to `maxMs` (default 1000) while a `waitUntilFinished` is pending, and up to
   * `idleMs` (default 5000) when none is — an idle QueueEvents costs 720 billed commands an hour, and
   * a listener hears the first event after a quiet spell up to `idleMs` late (set `idleMs` to
   * `maxMs` for 1 s at 3,600 an hour); a full page of `count` entries (default 500) is followed by
   * the next read at once.
   */
  poll?: { minMs?: number; maxMs?: number; idleMs?: number; count?: number };
}

const defaults = { minMs: 100, maxMs: 1000, idleMs: 5000, count: 500 } as const;

/**
 * Listens to a queue's events from anywhere fetch works (Lambda, edge, Node), as BullMQ's QueueEvents.
 * Events written by custom producers (BullMQ's QueueEventsProducer) are emitted too; type them with
 * `TCustom`.
 *
 * @example
 * const queueEvents = new QueueEvents("email", { redis: createRedis() });
 * queueEvents.on("completed", ({ jobId, returnvalue }) => console.log(jobId, returnvalue));
 * const result = await job.waitUntilFinished(queueEvents, 30_000);
 */
export class QueueEvents<
  TResult = unknown,
  TCustom extends Record<string, AnyListener> = Record<never, never>,
> extends Emitter<QueueEventsListener<TResult> & QueueEventsJobListener<TResult> & TCustom> {
  readonly name: string;
  readonly prefix: string;
  private readonly streamKey: string;
  private readonly stream: NonNullable<ReturnType<typeof streamPort>>;
  private readonly bounds: PollBounds;
  private readonly pageSize: number;
  private readonly startId: string;
  private cursor: string | undefined;
  private ready: Promise<void> | undefined;
  private running: Promise<void> | undefined;
  private closed: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private delayMs = 0;
  /** Pending waitUntilFinished calls: while there are any, reads stay at most `maxMs` apart. */
  private waiters = 0;
  private readonly closeHooks = new Set<() => void>();
  /** Fires when close() starts: a read failing meanwhile is not retried. */
  private readonly closing = new AbortController();
  private catchUps: (() => void)[] = [];

  constructor(name: string, options: QueueEventsOptions) {
    super();
    this.name = checkQueueName(name, "QueueEvents");
    const check: Checker = new Checker(`QueueEvents "${this.name}"`);
    const port = redisPortFrom(options, check.context, { signal: this.closing.signal }, name);
    this.prefix = checkPrefix(options.prefix ?? defaultPrefix, "QueueEvents");
    this.streamKey = queueKeys(this.prefix, this.name).events;
    const stream = streamPort(port);
    if (!stream)
      check.fail("redis", "a client that can read streams (xrange and xrevrange): an @upstash/redis client");
    this.stream = stream;
    if (options.events === "none")
      check.fail(
        "events",
        "all or final: with events none the queue's producers and workers write no job event, so QueueEvents " +
          "and waitUntilFinished would never hear one (read the job instead: getJobState, or GET " +
          "/queues/:queue/jobs/:id?wait=<ms>)",
      );
    if (options.events !== undefined && options.events !== "all" && options.events !== "final")
      check.fail("events", "one of all, final, none", options.events);
    const poll =
      options.poll === undefined
        ? {}
        : check.object("poll", options.poll, ["minMs", "maxMs", "idleMs", "count"]);
    const minMs = check.integer("poll.minMs", poll.minMs ?? defaults.minMs, 1, 3_600_000);
    const maxMs = check.integer(
      "poll.maxMs",
      poll.maxMs ?? Math.max(minMs, defaults.maxMs),
      minMs,
      3_600_000,
    );
    const idleMs = check.integer(
      "poll.idleMs",
      poll.idleMs ?? Math.max(maxMs, defaults.idleMs),
      maxMs,
      3_600_000,
    );
    this.bounds = { minMs, maxMs, idleMs };
    this.pageSize = check.integer("poll.count", poll.count ?? defaults.count, 1, 10_000);
    const lastEventId = options.lastEventId ?? "$";
    if (typeof lastEventId !== "string" || !isEventId(lastEventId))
      check.fail("lastEventId", '"$" or a stream id such as "0-0" or "1717000000000-3"', lastEventId);
    this.startId = lastEventId === "$" ? "$" : completeEventId(lastEventId);
    if (options.autorun ?? true) this.run().catch((error: unknown) => this.fire("error", asError(error)));
  }

  /**
   * The id of the last entry read (events up to it have been emitted): pass it as `lastEventId` to a
   * later QueueEvents to resume there. Undefined until the start is known (`waitUntilReady`).
   */
  get lastEventId(): string | undefined {
    return this.cursor;
  }

  /** True between `run()` and the end of `close()`. */
  isRunning(): boolean {
    return this.running !== undefined && this.closed === undefined;
  }

  /**
   * Resolves once the start of reading is fixed (for `$`, the newest entry is read first): no event
   * written after this resolves can be missed. Rejects when that read fails, or after `close()`.
   */
  waitUntilReady(): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError("waitUntilReady"));
    this.ready ??= this.findStart().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /**
   * Reads and emits events until `close()`; resolves then. Only needed with `autorun: false`; a second
   * call while running is refused (as BullMQ).
   */
  run(): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError("run"));
    if (this.running)
      return Promise.reject(new QueueStateError(`QueueEvents "${this.name}": run() while already running`));
    this.running = this.consume();
    return this.running;
  }

  /** Stops reading: idempotent; resolves once the read in flight has ended. Pending waits reject. */
  close(): Promise<void> {
    this.closing.abort();
    this.closed ??= (async () => {
      for (const hook of [...this.closeHooks]) hook();
      this.closeHooks.clear();
      this.wake?.();
      await Promise.allSettled([this.running, this.ready]);
    })();
    return this.closed;
  }

  /** @internal Calls `hook` when `close()` starts (at once when it has); returns the unsubscribe. */
  onClose(hook: () => void): () => void {
    if (this.closed) {
      hook();
      return () => {};
    }
    this.closeHooks.add(hook);
    return () => this.closeHooks.delete(hook);
  }

  /**
   * @internal Resolves once every event written before the call has been emitted (the loop reads at
   * once for it); never while the QueueEvents is not running.
   */
  caughtUp(): Promise<void> {
    const done = new Promise<void>((resolve) => this.catchUps.push(resolve));
    this.wake?.();
    return done;
  }

  /**
   * @internal A waitUntilFinished starts: reads stay at most `maxMs` apart until it calls the
   * release; a longer idle pause under way ends now.
   */
  holdInterval(): () => void {
    this.waiters += 1;
    if (this.delayMs > this.bounds.maxMs) {
      this.delayMs = this.bounds.maxMs;
      this.wake?.();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.waiters -= 1;
    };
  }

  /** @internal */
  closedError(operation: string): ClosedError {
    return new ClosedError(`QueueEvents "${this.name}": ${operation} after close()`);
  }

  private async findStart(): Promise<void> {
    this.cursor = this.startId === "$" ? await newestEventId(this.stream, this.streamKey) : this.startId;
  }

  private async consume(): Promise<void> {
    while (!this.closed) {
      // Callers of caughtUp() before this read are caught up once a read from here hits the end.
      const catchUps = this.catchUps.splice(0);
      let failed = false;
      try {
        await this.waitUntilReady();
        const entries = await readEventsAfter(
          this.stream,
          this.streamKey,
          this.cursor ?? "0-0",
          this.pageSize,
        );
        this.delayMs = nextPollDelay(
          this.delayMs,
          entries.length,
          this.pageSize,
          this.bounds,
          this.waiters > 0,
        );
        for (const [id, fields] of entries) {
          if (this.closed) return;
          this.cursor = id;
          this.dispatch(id, fields);
        }
        if (entries.length < this.pageSize) for (const resolve of catchUps.splice(0)) resolve();
      } catch (error) {
        if (this.closed) return;
        this.fire("error", asError(error));
        this.delayMs = this.bounds.maxMs;
        failed = true;
      }
      this.catchUps.unshift(...catchUps);
      // A catch-up asked for during the read is served by the next read at once (unless reads fail).
      const waitNext = failed || this.catchUps.length === 0;
      if (this.delayMs > 0 && waitNext && !this.closed) await this.pause(this.delayMs);
    }
  }

  /** BullMQ's emission: `drained` with the id only; others with their arguments, also as `<event>:<jobId>`. */
  private dispatch(id: string, fields: readonly string[]): void {
    const decoded = decodeEvent(fields);
    // An entry without an event name, or one posing as `error`, has no listener signature to meet.
    if (!decoded || decoded.event === "error") return;
    const { event, args } = decoded;
    if (event === "drained") {
      this.fire(event, id);
      return;
    }
    this.fire(event, args, id);
    if (typeof args.jobId === "string" && args.jobId !== "") this.fire(`${event}:${args.jobId}`, args, id);
  }

  private fire(event: string, ...args: unknown[]): void {
    (this.emit as (this: unknown, event: string, ...args: unknown[]) => void).call(this, event, ...args);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}

/** A QueueEvents of any result and custom event types: what `waitUntilFinished` takes. */
export type AnyQueueEvents = QueueEvents<unknown, Record<string, AnyListener>>;

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
