/**
 * Runs a leased batch: at most `concurrency` processors at once, each attempt with its own abort
 * signal and time limit, leases extended while anything is unfinished, nothing started once the
 * deadline or the stop signal has come.
 */
import type { ActiveJob } from "./active-job.ts";
import { LeaseLostError, TimeoutError, UnrecoverableError } from "./errors.ts";
import type { Settled } from "./outcome.ts";

export interface RunBatchOptions {
  processor: (job: ActiveJob) => Promise<unknown>;
  concurrency: number;
  /** Epoch ms; attempts still running then are stopped and handed back. */
  deadline: number;
  /** Stop starting jobs (running ones finish). */
  signal?: AbortSignal;
  clock: () => number;
  defaultTimeoutMs?: number;
  /** No attempt may run longer than this, whatever its own `timeout` says. */
  maxTimeoutMs?: number;
  extendEveryMs: number;
  onStart(job: ActiveJob): void;
  /** Extends the leases of the unfinished jobs; resolves to the ids whose lease is lost. */
  extend(unfinished: ActiveJob[]): Promise<Set<string>>;
}

/** An Error for anything a processor throws (strings, objects, undefined…). */
function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  let text: string;
  try {
    text = typeof thrown === "string" ? thrown : (JSON.stringify(thrown) ?? String(thrown));
  } catch {
    text = String(thrown);
  }
  const error = new Error(`the processor threw a non-Error value: ${text}`);
  error.name = "NonErrorThrown";
  return error;
}

type Stop = { kind: "timeout"; ms: number } | { kind: "deadline" } | { kind: "lost" };

export async function runBatch(
  jobs: ActiveJob[],
  options: RunBatchOptions,
): Promise<Map<ActiveJob, Settled>> {
  const settled = new Map<ActiveJob, Settled>();
  const stoppers = new Map<ActiveJob, (stop: Stop) => void>();
  const pending = [...jobs];
  const extender = setInterval(
    () => {
      const unfinished = jobs.filter((job) => !settled.has(job));
      if (unfinished.length === 0) return;
      void options.extend(unfinished).then((lost) => {
        for (const job of unfinished) if (lost.has(job.id)) stoppers.get(job)?.({ kind: "lost" });
      });
    },
    Math.max(options.extendEveryMs, 100),
  );

  const runOne = async (job: ActiveJob): Promise<Settled> => {
    if (options.signal?.aborted || options.clock() >= options.deadline) return { kind: "handed-back" };
    if (job.deferredFailure !== undefined) {
      return { kind: "threw", error: new UnrecoverableError(job.deferredFailure) };
    }
    const controller = new AbortController();
    job.signal = controller.signal;
    const ownTimeout = Number(job.opts.timeout ?? options.defaultTimeoutMs ?? 0);
    const cap = options.maxTimeoutMs ?? 0;
    const timeoutMs = cap > 0 && (ownTimeout <= 0 || ownTimeout > cap) ? cap : ownTimeout;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopped = new Promise<Stop>((resolve) => {
      stoppers.set(job, resolve);
      const untilDeadline = options.deadline - options.clock();
      if (timeoutMs > 0 && timeoutMs <= untilDeadline) {
        timer = setTimeout(() => resolve({ kind: "timeout", ms: timeoutMs }), timeoutMs);
      } else if (Number.isFinite(untilDeadline)) {
        timer = setTimeout(() => resolve({ kind: "deadline" }), Math.max(untilDeadline, 0));
      }
    });
    options.onStart(job);
    const attempt = Promise.resolve()
      .then(() => options.processor(job))
      .then(
        (value): Settled => ({ kind: "returned", value }),
        (thrown: unknown): Settled => ({ kind: "threw", error: asError(thrown) }),
      );
    const first = await Promise.race([attempt, stopped.then((stop) => ({ stop }))]);
    clearTimeout(timer);
    if (!("stop" in first)) return first;
    const { stop } = first;
    if (stop.kind === "timeout") {
      const error = new TimeoutError(
        `job "${job.id}" in queue "${job.queueName}" timed out after ${stop.ms} ms`,
      );
      controller.abort(error);
      return { kind: "threw", error };
    }
    controller.abort(
      stop.kind === "lost"
        ? new LeaseLostError(`lease lost on job "${job.id}" in queue "${job.queueName}"`)
        : new TimeoutError(`the worker's deadline came before job "${job.id}" finished`),
    );
    return { kind: "handed-back" };
  };

  const lane = async (): Promise<void> => {
    for (let job = pending.shift(); job; job = pending.shift()) {
      settled.set(job, await runOne(job));
      stoppers.delete(job);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, jobs.length) }, lane));
  } finally {
    clearInterval(extender);
  }
  return settled;
}
