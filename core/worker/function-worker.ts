/**
 * A worker run as a function's invocations (the policy of functions/worker.ts, without Lambda): the
 * Worker is made on the first invocation, with leases sized for the longest job; each invocation
 * drains until its deadline (its remaining time less a safety margin) while registered for the
 * sweeper, and says what should come next: nothing, a fresh invocation to go on ("chain", within
 * `maxChain`), or a fix ("too-short": the function's timeout is below a job's, chaining would only
 * pass the problem on).
 */
import { checkHandedOver, type HandedOverJob } from "../job/handed-over.ts";
import { Checker, checkQueueName } from "../validate.ts";
import { drainInvocation, type NextStep, nextStep } from "./invocation.ts";
import { isProcessorFile } from "./sandbox.ts";
import type { DrainSummary, Processor } from "./types.ts";
import { Worker, type WorkerOptions } from "./worker.ts";

export interface FunctionWorkerOptions<TData, TResult> extends Omit<WorkerOptions, "redis"> {
  queue: string;
  /** The processor, or the path of a processor file run in worker threads (see Worker). */
  processor: Processor<TData, TResult> | string | URL;
  redis?: WorkerOptions["redis"];
  /** Longest a job may run (ms); no job starts unless this much time is left. Default 30 s. */
  jobTimeoutMs?: number;
  /** Time kept free before the function's timeout for the ack and the chaining call (ms, default 3000). */
  safetyMarginMs?: number;
  /** Most self re-invocations in a row (default 10). */
  maxChain?: number;
  /**
   * When the queue's next delayed job (a retry's backoff, a short delay) is due within this many ms,
   * wait for it and go on instead of leaving it to the sweeper's next tick (default 5000; 0 never).
   */
  waitForDelayedMs?: number;
  /** Called once with the worker the handler creates (before its first drain): subscribe to its events here. */
  onWorker?: (worker: Worker<TData, TResult>) => void;
}

/** What an adapter gives beside the options. */
export interface FunctionWorkerPorts {
  /**
   * The worker's Redis client and events level, asked for when the first invocation makes the
   * Worker (so an adapter reads its environment then, not at import).
   */
  connect(): Pick<WorkerOptions, "redis" | "events">;
  /** A failed registration only costs the sweeper's count of running workers; the drain goes on. */
  onRegisterError(error: unknown): void;
}

/** What starts a worker invocation: the sweeper, the HTTP API's kick, or the worker itself chaining. */
export interface InvocationRequest {
  queue?: string;
  reason?: string;
  /** How many times this invocation chain has re-invoked itself. */
  chain?: number;
  /** A delayed job is due then (ms): wait for it if it comes before this invocation must end. */
  wakeAt?: number;
  /** The job the add that started this invocation leased to it (core/adds/handoff.ts): it runs at once. */
  handoff?: HandedOverJob;
}

/** An invocation's drain summary, its queue, and whether it re-invokes itself. */
export interface FunctionWorkerResult extends DrainSummary {
  queue: string;
  chained: boolean;
}

export interface FunctionInvocationResult {
  result: FunctionWorkerResult;
  next: NextStep;
  /** The request a chained invocation is started with. */
  chainRequest: InvocationRequest;
  /** What to fix, when the invocation could not start a job at all ("too-short"). */
  problem?: string;
  /** From the invocation's start to the drain's end (ms). */
  processingMs: number;
}

export interface FunctionWorker {
  /** Throws when the request names another queue than this worker's (a misrouted invocation). */
  accept(request: InvocationRequest | undefined): void;
  /** One invocation: `id` is what it registers under, `remainingMs` the time until the function ends. */
  run(id: string, remainingMs: number, request?: InvocationRequest): Promise<FunctionInvocationResult>;
}

export function createFunctionWorker<TData, TResult>(
  options: FunctionWorkerOptions<TData, TResult>,
  ports: FunctionWorkerPorts,
): FunctionWorker {
  checkFunctionWorker(options, ports);
  const { queue } = options;
  const jobTimeoutMs = options.jobTimeoutMs ?? 30_000;
  const safetyMarginMs = options.safetyMarginMs ?? 3000;
  let worker: Worker<TData, TResult> | undefined;
  /** Retries of a failed call stop a second before the function's end (epoch ms). */
  let retryUntil = Number.POSITIVE_INFINITY;

  function accept(request: InvocationRequest | undefined): void {
    if (request?.queue !== undefined && typeof request.queue !== "string")
      new Checker(`worker for queue "${queue}"`).fail("event.queue", "a queue name", request.queue);
    if (request?.queue !== undefined && request.queue !== queue) {
      throw new Error(`worker for queue "${queue}" was invoked for queue "${request.queue}"`);
    }
    if (request?.handoff !== undefined) checkHandedOver(request.handoff, `worker for queue "${queue}"`);
  }

  function create(): Worker<TData, TResult> {
    const made = new Worker<TData, TResult>(queue, options.processor, {
      ...options,
      ...ports.connect(),
      retry: { ...options.retry, deadline: () => retryUntil },
      jobTimeoutMs,
      maxJobTimeoutMs: jobTimeoutMs,
      leaseMs: options.leaseMs ?? Math.max(30_000, jobTimeoutMs + 5000),
    });
    options.onWorker?.(made);
    return made;
  }

  async function run(id: string, remainingMs: number, request?: InvocationRequest) {
    accept(request);
    worker ??= create();
    const started = Date.now();
    const deadline = started + remainingMs - safetyMarginMs;
    retryUntil = started + remainingMs - 1000;
    const summary = await drainInvocation(worker, {
      deadline,
      jobTimeoutMs,
      waitForDelayedMs: options.waitForDelayedMs,
      wakeAt: request?.wakeAt,
      ...(request?.handoff ? { handedOver: request.handoff } : {}),
      register: { id, until: deadline + safetyMarginMs, onError: ports.onRegisterError },
    });
    const chain = request?.chain ?? 0;
    const next = nextStep(summary, chain, options.maxChain ?? 10);
    const problem = `less than jobTimeoutMs (${jobTimeoutMs} ms) + safetyMarginMs left at start; raise the function timeout`;
    return {
      result: { ...summary, queue, chained: next === "chain" },
      next,
      chainRequest: { queue, reason: "chain", chain: chain + 1 },
      ...(next === "too-short" ? { problem } : {}),
      processingMs: Date.now() - started,
    };
  }

  return { accept, run };
}

/** What createFunctionWorker needs before its first invocation; the Worker checks its own options then. */
function checkFunctionWorker(options: unknown, ports: unknown): void {
  const check = new Checker("createFunctionWorker");
  if (typeof options !== "object" || options === null || Array.isArray(options))
    check.fail("options", "an object with queue and processor", options);
  const given = options as Record<string, unknown>;
  checkQueueName(given.queue, "createFunctionWorker", "queue");
  if (typeof given.processor !== "function" && !isProcessorFile(given.processor))
    check.fail("processor", "a function (job) => result, or the path of a processor file", given.processor);
  for (const field of ["jobTimeoutMs", "safetyMarginMs", "maxChain", "waitForDelayedMs"])
    if (given[field] !== undefined) check.integer(field, given[field], 0);
  if (given.onWorker !== undefined && typeof given.onWorker !== "function")
    check.fail("onWorker", "a function", given.onWorker);
  const port = check.object("ports", ports, ["connect", "onRegisterError"]);
  for (const field of ["connect", "onRegisterError"])
    if (typeof port[field] !== "function") check.fail(`ports.${field}`, "a function", port[field]);
}
