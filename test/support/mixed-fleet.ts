/**
 * The worker side of the interop rig: jobs come from the real bullmq@6.7.0 producers, and the same
 * processor runs either in a real BullMQ Worker or in nimbusq's Worker (over HTTP), so a test can
 * hold what each left behind side by side. Every nimbusq run loop is stopped after the test.
 */
import type { Job as BullJob } from "bullmq";
import { type ActiveJob, Worker, type WorkerOptions } from "../../core/index.ts";
import { type Interop, type RecordedEvent, waitFor, workerEventNames } from "./bullmq-peer.ts";

export type Side = "nimbusq" | "bullmq";
export const sides: readonly Side[] = ["bullmq", "nimbusq"];

/** What both libraries' jobs offer a processor. */
export interface EitherJob {
  readonly id?: string;
  name: string;
  data: unknown;
  attemptsMade: number;
  updateProgress(progress: number | object): Promise<unknown>;
  log(line: string): Promise<number>;
}

export type EitherProcessor = (job: EitherJob) => Promise<unknown>;

/** One processor start: which job, which attempt, when (epoch ms). */
export interface Run {
  id: string;
  name: string;
  attemptsMade: number;
  startedAt: number;
}

/** A nimbusq Worker on the kit's prefix, polling fast. */
export function nimbusWorker(
  io: Interop,
  queue: string,
  processor: (job: ActiveJob) => Promise<unknown>,
  options: Partial<WorkerOptions> = {},
): Worker {
  const worker = new Worker(queue, processor, {
    redis: io.redis,
    prefix: io.prefix,
    poll: { minMs: 10, maxMs: 50 },
    ...options,
  });
  worker.on("error", () => {});
  return worker;
}

/** Starts `worker.run` until the test ends (or `stop` is called). */
export function runLoop(io: Interop, worker: Worker): { stop(): Promise<void>; done: Promise<void> } {
  const controller = new AbortController();
  const done = worker.run({ signal: controller.signal });
  const stop = async () => {
    controller.abort();
    await done;
  };
  io.defer(stop);
  return { stop, done };
}

/**
 * Runs `processor` on queue `queue` of the kit, in a BullMQ Worker (concurrency 1) or in nimbusq's
 * run loop (one job per lease, so both take jobs one at a time), recording every start in order.
 */
export function processWith(
  io: Interop,
  side: Side,
  queue: string,
  processor: EitherProcessor,
  options: Partial<WorkerOptions> = {},
): Run[] {
  const runs: Run[] = [];
  const record = (job: EitherJob) =>
    runs.push({ id: String(job.id), name: job.name, attemptsMade: job.attemptsMade, startedAt: Date.now() });
  if (side === "bullmq") {
    io.worker(queue, (job: BullJob) => {
      record(job);
      return processor(job);
    });
  } else {
    const worker = nimbusWorker(
      io,
      queue,
      (job) => {
        record(job);
        return processor(job);
      },
      { batchSize: 1, ...options },
    );
    runLoop(io, worker);
  }
  return runs;
}

/** Resolves once `count` jobs of the queue sit in completed or failed. */
export async function finished(io: Interop, queue: string, count: number, timeoutMs = 8000): Promise<void> {
  await waitFor(
    async () => {
      const [completed, failed] = await Promise.all([
        io.raw.zcard(io.key(queue, "completed")),
        io.raw.zcard(io.key(queue, "failed")),
      ]);
      return completed + failed >= count;
    },
    `${count} finished jobs in "${queue}"`,
    timeoutMs,
  );
}

/** A QueueEvents recording every event a worker or a producer writes. */
export async function recordAll(io: Interop, queue: string): Promise<RecordedEvent[]> {
  const { log } = await io.events(queue, io.prefix, workerEventNames);
  return log;
}

/** Resolves once QueueEvents has delivered every entry of the stream (nothing is trimmed here). */
export async function delivered(io: Interop, queue: string, log: RecordedEvent[]): Promise<RecordedEvent[]> {
  await waitFor(
    async () => log.length === (await io.raw.xlen(io.key(queue, "events"))),
    `QueueEvents to deliver the whole stream of "${queue}"`,
  );
  return log;
}

/** The clock-dependent field of `delayed` events (an absolute due time) blanked. */
export function blurDue(log: RecordedEvent[]): RecordedEvent[] {
  return log.map((e) => (e.event === "delayed" ? { ...e, delay: "<due>" } : e));
}

/** Each job's own events in stream order, clock fields blanked. */
export function byJob(log: RecordedEvent[]): Record<string, RecordedEvent[]> {
  const out: Record<string, RecordedEvent[]> = {};
  for (const e of blurDue(log)) {
    const id = typeof e.jobId === "string" ? e.jobId : "<queue>";
    out[id] = [...(out[id] ?? []), e];
  }
  return out;
}

const firstLine = (trace: string) => trace.split("\n")[0];

/** Each job as BullMQ's own Queue reads it back, clock fields reduced to "set or not". */
export async function outcomes(
  io: Interop,
  queue: string,
  ids: readonly string[],
): Promise<Record<string, unknown>> {
  const reader = io.bullQueue(queue);
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    const job = await reader.getJob(id);
    if (!job) {
      out[id] = "gone";
      continue;
    }
    out[id] = {
      state: await job.getState(),
      returnvalue: job.returnvalue ?? undefined,
      failedReason: job.failedReason ?? undefined,
      stacktrace: (job.stacktrace ?? []).map(firstLine),
      attemptsMade: job.attemptsMade,
      attemptsStarted: job.attemptsStarted,
      stalledCounter: job.stalledCounter,
      progress: job.progress,
      delay: job.delay,
      priority: job.priority,
      deferredFailure: job.deferredFailure,
      processed: typeof job.processedOn === "number",
      finished: typeof job.finishedOn === "number",
      logs: (await reader.getJobLogs(id)).logs,
    };
  }
  return out;
}
