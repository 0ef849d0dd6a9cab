/**
 * Shared rig for the interop suite: nimbusq over the REST server on one side, the real bullmq@6.7.0
 * over TCP to the same redis-server on the other, both under one fresh prefix per test. Every BullMQ
 * object made through a peers is closed (and its connections dropped) after the test.
 */
import {
  FlowProducer as BullFlowProducer,
  type Job as BullJob,
  type JobsOptions as BullJobsOptions,
  Queue as BullQueue,
  QueueEvents as BullQueueEvents,
  Worker as BullWorker,
  type WorkerOptions,
} from "bullmq";
import type { Redis as IORedis } from "ioredis";
import { afterEach } from "vitest";
import { type FlowJob, FlowProducer, type Job, type JobsOptions, Queue } from "../../core/index.ts";
import { bullConnection, sharedConnection, sharedRedis, uniquePrefix } from "./stack.ts";

/**
 * A `connection` for BullMQ: options, so it makes (and closes) its own ioredis connections; on the
 * cluster a Cluster client the file closes (stack.ts).
 */
export { bullConnection };

/** nimbusq's option types are BullMQ's options; BullMQ's typings only spell some of them differently. */
export const bullOpts = (opts: JobsOptions | undefined) => opts as BullJobsOptions | undefined;
export const bullFlowJob = (flow: FlowJob) => flow as Parameters<BullFlowProducer["add"]>[0];

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns something truthy; fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 8000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** What a BullMQ processor saw of one job, and when it started (epoch ms). */
export interface Seen {
  id: string;
  name: string;
  data: unknown;
  opts: Record<string, unknown>;
  timestamp: number;
  delay: number;
  priority: number;
  parentKey: string | undefined;
  parent: unknown;
  deduplicationId: string | undefined;
  attemptsMade: number;
  startedAt: number;
}

export type Handler = (job: BullJob, seen: Seen) => unknown;

/** A running BullMQ Worker that records every job its processor starts, in order. */
export interface RecordingWorker {
  worker: BullWorker;
  seen: Seen[];
  /** Resolves once `count` jobs have been started (not necessarily finished). */
  started(count: number, timeoutMs?: number): Promise<Seen[]>;
  /** Resolves once the worker is running and blocked on the marker (it idles ~1 s first). */
  idle(): Promise<void>;
}

export interface RecordedEvent {
  event: string;
  [field: string]: unknown;
}

export const eventNames = [
  "added",
  "waiting",
  "delayed",
  "duplicated",
  "deduplicated",
  "removed",
  "waiting-children",
  "active",
  "completed",
  "failed",
  "paused",
  "resumed",
] as const;

/** Everything a worker writes to the stream as well: what the worker-side interop suite records. */
export const workerEventNames = [
  ...eventNames,
  "progress",
  "retries-exhausted",
  "stalled",
  "drained",
] as const;

export class Interop {
  readonly prefix: string;
  readonly redis = sharedRedis();
  private direct: IORedis | undefined;
  private readonly closers: (() => Promise<unknown>)[] = [];

  constructor(label = "io") {
    this.prefix = uniquePrefix(label);
  }

  /** A plain ioredis connection for looking at raw keys. */
  get raw(): IORedis {
    if (!this.direct) {
      const direct = sharedConnection();
      this.direct = direct;
      this.closers.push(async () => direct.disconnect());
    }
    return this.direct;
  }

  key(queue: string, suffix: string): string {
    return `${this.prefix}:${queue}:${suffix}`;
  }

  /** nimbusq's Queue over HTTP. */
  queue<T = unknown>(name: string, prefix = this.prefix): Queue<T> {
    return new Queue<T>(name, { redis: this.redis, prefix });
  }

  /** nimbusq's FlowProducer over HTTP. */
  flow(prefix = this.prefix): FlowProducer {
    return new FlowProducer({ redis: this.redis, prefix });
  }

  /** BullMQ's Queue. */
  bullQueue(name: string, prefix = this.prefix): BullQueue {
    const queue = new BullQueue(name, { connection: bullConnection(), prefix });
    this.closers.push(() => queue.close());
    return queue;
  }

  bullFlow(prefix = this.prefix): BullFlowProducer {
    const flow = new BullFlowProducer({ connection: bullConnection(), prefix });
    this.closers.push(() => flow.close());
    return flow;
  }

  /** Runs `close` with the peers's own closers (newest first) after the test. */
  defer(close: () => Promise<unknown>): void {
    this.closers.push(close);
  }

  /** A BullMQ QueueEvents that records the events named in `names`, ready before it returns. */
  async events(
    name: string,
    prefix = this.prefix,
    names: readonly string[] = eventNames,
  ): Promise<{ events: BullQueueEvents; log: RecordedEvent[] }> {
    // Reading from the stream's start (each test has a fresh prefix) so no event can slip in between
    // `waitUntilReady` and the first blocking XREAD.
    const events = new BullQueueEvents(name, { connection: bullConnection(), prefix, lastEventId: "0-0" });
    this.closers.push(() => events.close());
    const log: RecordedEvent[] = [];
    for (const event of names) {
      // `drained` carries only the stream id.
      events.on(event as "added", (args: object | string) => {
        log.push(typeof args === "object" ? { event, ...args } : { event });
      });
    }
    await events.waitUntilReady();
    return { events, log };
  }

  /** A BullMQ Worker (concurrency 1 unless told otherwise) recording what its processor sees. */
  worker(name: string, handler?: Handler, opts: Partial<WorkerOptions> = {}): RecordingWorker {
    const seen: Seen[] = [];
    const waiters: { count: number; resolve: () => void }[] = [];
    const worker = new BullWorker(
      name,
      async (job) => {
        const record: Seen = {
          id: job.id as string,
          name: job.name,
          data: job.data,
          opts: { ...job.opts } as Record<string, unknown>,
          timestamp: job.timestamp,
          delay: job.delay,
          priority: job.priority,
          parentKey: job.parentKey,
          parent: job.parent,
          deduplicationId: job.deduplicationId,
          attemptsMade: job.attemptsMade,
          startedAt: Date.now(),
        };
        seen.push(record);
        for (const waiter of waiters) if (seen.length >= waiter.count) waiter.resolve();
        return handler ? await handler(job, record) : undefined;
      },
      { connection: bullConnection(), prefix: this.prefix, concurrency: 1, ...opts },
    );
    worker.on("error", () => {});
    this.closers.push(() => worker.close(true));
    return {
      worker,
      seen,
      started: (count, timeoutMs = 8000) =>
        new Promise<Seen[]>((resolve, reject) => {
          if (seen.length >= count) {
            resolve(seen);
            return;
          }
          const timer = setTimeout(
            () =>
              reject(
                new Error(`worker "${name}" started ${seen.length} of ${count} jobs in ${timeoutMs} ms`),
              ),
            timeoutMs,
          );
          waiters.push({
            count,
            resolve: () => {
              clearTimeout(timer);
              resolve(seen);
            },
          });
        }),
      idle: async () => {
        await worker.waitUntilReady();
        await waitFor(() => worker.isRunning(), "the worker to run");
        await sleep(1000);
      },
    };
  }

  /** Closes every BullMQ object and connection this peers made, newest first. */
  async close(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch {
        // A failed close must not hide the test's own result.
      }
    }
  }
}

/** The same producer operations through nimbusq (HTTP) or BullMQ (TCP), under one peers's prefix. */
export interface Producer {
  add(queue: string, name: string, data: unknown, opts?: JobsOptions): Promise<string>;
  flow(tree: FlowJob): Promise<void>;
  /** Removes a job without its children (`remove({ removeChildren: false })` on both sides). */
  remove(queue: string, id: string): Promise<void>;
}

export function producer(io: Interop, which: "nimbusq" | "bullmq"): Producer {
  if (which === "nimbusq") {
    return {
      add: async (queue, name, data, opts) => (await io.queue(queue).add(name, data, opts)).id,
      flow: async (tree) => {
        await io.flow().add(tree);
      },
      remove: async (queue, id) => {
        const job = await io.queue(queue).getJob(id);
        await job?.remove({ removeChildren: false });
      },
    };
  }
  const queues = new Map<string, BullQueue>();
  const bull = (name: string) => {
    let queue = queues.get(name);
    if (!queue) {
      queue = io.bullQueue(name);
      queues.set(name, queue);
    }
    return queue;
  };
  const flow = io.bullFlow();
  return {
    add: async (queue, name, data, opts) => (await bull(queue).add(name, data, bullOpts(opts))).id as string,
    flow: async (tree) => {
      await flow.add(bullFlowJob(tree));
    },
    remove: async (queue, id) => {
      const job = await bull(queue).getJob(id);
      await job?.remove({ removeChildren: false });
    },
  };
}

/** Registers an afterEach that closes every peers made by the returned factory. */
export function interopPeers(): (label?: string) => Interop {
  const peerSets: Interop[] = [];
  afterEach(async () => {
    for (const peers of peerSets.splice(0)) await peers.close();
  });
  return (label) => {
    const peers = new Interop(label);
    peerSets.push(peers);
    return peers;
  };
}

/** The readable fields of a job, nimbusq's or BullMQ's, in one comparable shape. */
export function readable(job: Job | BullJob | undefined) {
  if (!job) return undefined;
  return {
    id: job.id,
    name: job.name,
    data: job.data,
    opts: job.opts,
    timestamp: job.timestamp,
    delay: job.delay,
    priority: job.priority,
    progress: job.progress,
    returnvalue: job.returnvalue ?? undefined,
    failedReason: job.failedReason ?? undefined,
    stacktrace: job.stacktrace ?? [],
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    processedOn: job.processedOn ?? undefined,
    finishedOn: job.finishedOn ?? undefined,
    parentKey: job.parentKey ?? undefined,
  };
}

/** BullMQ's Job normalizes the opts it reads (`attempts` defaulted, `backoff` expanded); nimbusq's
 * reader returns them as stored. Both must agree once BullMQ's reader has had its say. */
export function bullView(job: Job | BullJob | undefined) {
  const view = readable(job);
  if (!view) return view;
  return { ...view, opts: JSON.parse(JSON.stringify(view.opts)) as Record<string, unknown> };
}

/** A job hash as stored, with the JSON fields parsed and the clock-dependent fields named but blanked. */
export async function storedJob(raw: IORedis, key: string): Promise<Record<string, unknown>> {
  const hash = await raw.hgetall(key);
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(hash)) {
    if (field === "opts" || field === "parent" || field === "data") out[field] = JSON.parse(value);
    else if (field === "timestamp" || field === "processedOn" || field === "finishedOn") out[field] = "<ms>";
    else out[field] = value;
  }
  return out;
}
