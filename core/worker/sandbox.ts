/**
 * Processor files, as BullMQ's sandboxed processors: `new Worker("q", "./processor.js", …)` runs the
 * file's default export in a separate thread, so CPU-bound work never blocks the worker's own event
 * loop (its lease extensions and acks). Core knows only this interface; the Node implementation
 * (worker threads, sandbox/) registers itself when the package is imported under Node.
 */
import type { ActiveJob } from "../job/active-job.ts";
import { Checker } from "../validate.ts";

export interface Sandbox {
  /** Runs one attempt in a thread; rejects with the processor's error, rebuilt by name. */
  processor: (job: ActiveJob) => Promise<unknown>;
  /** Stops every thread. */
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Most attempts at once: one thread each. */
  concurrency: number;
}

export type SandboxFactory = (file: string | URL, options: SandboxOptions) => Sandbox;

let factory: SandboxFactory | undefined;

/** Called by the Node entry (sandbox/register.ts). */
export function setSandboxFactory(made: SandboxFactory): void {
  factory = made;
}

/** A processor given as a path or file URL rather than a function. */
export function isProcessorFile(processor: unknown): processor is string | URL {
  return typeof processor === "string" || processor instanceof URL;
}

/** The sandbox for a processor file; a ValidationError where threads are not available. */
export function sandboxFor(file: string | URL, options: SandboxOptions, context: string): Sandbox {
  const check = new Checker(context);
  if (typeof file === "string" && file.trim() === "")
    check.fail("processor", "a function or the path of a processor file", file);
  if (factory) return factory(file, options);
  return check.fail(
    "processor",
    'a function here: processor files run in worker threads, which need Node (import "nimbusq" under Node, or "nimbusq/sandbox")',
    String(file),
  );
}
