/**
 * Processor files run in Node worker threads (BullMQ runs them in child processes or, with
 * `useWorkerThreads`, threads): one thread per attempt running at once, kept for the next attempt,
 * up to the worker's concurrency. The job travels as its fields (structured clone); `updateProgress`,
 * `log` and `updateData` are carried out by the worker's real job; `job.signal` is forwarded, and a
 * thread that has not settled a second after its attempt was stopped is terminated (a busy loop
 * cannot be interrupted otherwise) and replaced by a fresh one.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker as Thread } from "node:worker_threads";
import { type ActiveJob, RateLimitError, UnrecoverableError } from "../core/index.ts";
import type { Sandbox } from "../core/internal.ts";
import { threadSource } from "./thread-source.ts";

/** How long a stopped attempt's thread may take to settle before it is terminated (ms). */
const stopGraceMs = 1000;

interface Running {
  job: ActiveJob;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Slot {
  thread: Thread;
  running: Running | undefined;
}

type FromThread =
  | { type: "done"; attempt: number; value: unknown }
  | { type: "failed"; attempt: number; error: { name: string; message: string; stack?: string } }
  | {
      type: "call";
      attempt: number;
      id: number;
      method: "updateProgress" | "log" | "updateData";
      args: unknown[];
    };

/** An absolute file URL for a path (relative to the working directory, as BullMQ resolves it) or URL. */
export function processorUrl(file: string | URL): string {
  if (file instanceof URL) return file.href;
  if (/^file:\/\//.test(file)) return file;
  return pathToFileURL(isAbsolute(file) ? file : resolve(file)).href;
}

/** The processor's error in this thread: nimbusq's classes by name, so they keep their meaning. */
function rebuilt(error: { name: string; message: string; stack?: string }): Error {
  const made =
    error.name === "UnrecoverableError"
      ? new UnrecoverableError(error.message)
      : error.name === "RateLimitError"
        ? new RateLimitError(error.message)
        : Object.assign(new Error(error.message), { name: error.name });
  if (error.stack) made.stack = error.stack;
  return made;
}

export function threadSandbox(file: string | URL): Sandbox {
  const url = processorUrl(file);
  const slots = new Set<Slot>();
  let attempts = 0;
  let closed = false;

  function spawn(): Slot {
    const slot: Slot = {
      thread: new Thread(threadSource, { eval: true, workerData: { url } }),
      running: undefined,
    };
    slot.thread.unref();
    slot.thread.on("message", (message: FromThread) => void answer(slot, message));
    slot.thread.on("error", (error) => retire(slot, error));
    slot.thread.on("exit", (code) =>
      retire(slot, new Error(`the processor's thread exited with code ${code}`)),
    );
    slots.add(slot);
    return slot;
  }

  /** A thread that failed or was stopped leaves the pool; its attempt, if any, fails with `error`. */
  function retire(slot: Slot, error: unknown): void {
    if (!slots.delete(slot)) return;
    const running = slot.running;
    slot.running = undefined;
    running?.reject(error);
    void slot.thread.terminate();
  }

  async function answer(slot: Slot, message: FromThread): Promise<void> {
    const running = slot.running;
    if (!running) return;
    if (message.type === "call") {
      const reply: Record<string, unknown> = { type: "answer", id: message.id };
      try {
        const job = running.job as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
        reply.value = (await job[message.method]?.(...message.args)) ?? null;
      } catch (error) {
        reply.error = { name: (error as Error).name, message: (error as Error).message };
      }
      slot.thread.postMessage(reply);
      return;
    }
    slot.running = undefined;
    if (message.type === "done") running.resolve(message.value);
    else running.reject(rebuilt(message.error));
  }

  function fields(job: ActiveJob): Record<string, unknown> {
    const { id, name, data, opts, timestamp, delay, priority, progress, attemptsMade, attemptsStarted } = job;
    return {
      id,
      name,
      data,
      opts,
      timestamp,
      delay,
      priority,
      progress,
      attemptsMade,
      attemptsStarted,
      processedOn: job.processedOn,
      parentKey: job.parentKey,
      repeatJobKey: job.repeatJobKey,
      queueName: job.queueName,
      queueQualifiedName: job.queueQualifiedName,
    };
  }

  async function processor(job: ActiveJob): Promise<unknown> {
    if (closed) throw new Error("the worker's sandbox is closed");
    const slot = [...slots].find((s) => !s.running) ?? spawn();
    const attempt = ++attempts;
    const settled = new Promise((resolve, reject) => {
      slot.running = { job, resolve, reject };
    });
    slot.thread.postMessage({ type: "run", attempt, job: fields(job) });
    const onAbort = () => {
      const reason = job.signal.reason as Error | undefined;
      slot.thread.postMessage({
        type: "abort",
        attempt,
        reason: String(reason?.message),
        name: reason?.name,
      });
      const timer = setTimeout(() => {
        if (slot.running?.job === job) retire(slot, reason ?? new Error("stopped"));
      }, stopGraceMs);
      timer.unref?.();
    };
    job.signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await settled;
    } finally {
      job.signal.removeEventListener("abort", onAbort);
    }
  }

  return {
    processor,
    close: async () => {
      closed = true;
      const all = [...slots];
      for (const slot of all) retire(slot, new Error("the worker closed its sandbox"));
      await Promise.all(all.map((slot) => slot.thread.terminate()));
    },
  };
}
