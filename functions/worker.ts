/**
 * The worker Lambda: invoked asynchronously with `{ queue }`, it drains the queue until its time is
 * nearly up, never starting a job that could not finish before then, and re-invokes itself when it
 * stops with work left. A duplicate or lost invocation is harmless: Redis leases are the truth.
 *
 * @example
 * export const handler = workerHandler({ queue: "email", processor: sendEmail, batchSize: 25, concurrency: 10 });
 */
import type { Context } from "aws-lambda";
import {
  type DrainSummary,
  drainInvocation,
  nextStep,
  type Processor,
  Worker,
  type WorkerOptions,
} from "../core/index.ts";
import { createLambdaInvoker, type Invoke } from "./aws/lambda-invoker.ts";
import { eventsFromEnv } from "./config/events-env.ts";
import { createLogger, errorFields, logger } from "./log.ts";
import { workerMetricsLine } from "./metrics.ts";
import { redisOrEnv } from "./redis-from-env.ts";
import { setInvocationDeadline } from "./request-deadline.ts";

/** What invokes a worker: the sweeper, the HTTP API's kick, or the worker itself chaining. */
export interface WorkerEvent {
  queue?: string;
  reason?: string;
  /** How many times this invocation chain has re-invoked itself. */
  chain?: number;
  /** A delayed job is due then (ms): wait for it if it comes before this invocation must end. */
  wakeAt?: number;
}

export interface WorkerHandlerOptions<TData, TResult> extends Omit<WorkerOptions, "redis"> {
  queue: string;
  processor: Processor<TData, TResult>;
  redis?: WorkerOptions["redis"];
  /** Longest a job may run (ms); no job starts unless this much time is left. Default 30 s. */
  jobTimeoutMs?: number;
  /** Time kept free before the Lambda timeout for the ack and the chaining call (ms, default 3000). */
  safetyMarginMs?: number;
  /** Most self re-invocations in a row (default 10). */
  maxChain?: number;
  /**
   * When the queue's next delayed job (a retry's backoff, a short delay) is due within this many ms,
   * wait for it and go on instead of leaving it to the sweeper's next tick (default 5000; 0 never).
   */
  waitForDelayedMs?: number;
  invoke?: Invoke;
  /** Where log and metric lines go (default stdout). */
  output?: (line: string) => void;
  /** Called once with the worker the handler creates (before its first drain): subscribe to its events here. */
  onWorker?: (worker: Worker<TData, TResult>) => void;
}

export interface WorkerHandlerResult extends DrainSummary {
  queue: string;
  chained: boolean;
}

type WorkerContext = Pick<Context, "getRemainingTimeInMillis" | "functionName" | "awsRequestId">;

export function workerHandler<TData = unknown, TResult = unknown>(
  options: WorkerHandlerOptions<TData, TResult>,
) {
  const jobTimeoutMs = options.jobTimeoutMs ?? 30_000;
  const safetyMarginMs = options.safetyMarginMs ?? 3000;
  const maxChain = options.maxChain ?? 10;
  let worker: Worker<TData, TResult> | undefined;
  let invoke: Invoke | undefined = options.invoke;
  const log = options.output ? createLogger({ output: options.output }) : logger;
  const emit = options.output ?? ((line: string) => process.stdout.write(`${line}\n`));

  return async (event: WorkerEvent | undefined, context: WorkerContext): Promise<WorkerHandlerResult> => {
    if (event?.queue !== undefined && event.queue !== options.queue) {
      throw new Error(`worker for queue "${options.queue}" was invoked for queue "${event.queue}"`);
    }
    setInvocationDeadline(context);
    log.startInvocation(context);
    const queue = options.queue;
    if (!worker) {
      worker = new Worker<TData, TResult>(options.queue, options.processor, {
        ...options,
        redis: redisOrEnv(options.redis),
        jobTimeoutMs,
        maxJobTimeoutMs: jobTimeoutMs,
        leaseMs: options.leaseMs ?? Math.max(30_000, jobTimeoutMs + 5000),
        events: options.events ?? eventsFromEnv(),
      });
      options.onWorker?.(worker);
    }
    const started = Date.now();
    const deadline = started + context.getRemainingTimeInMillis() - safetyMarginMs;
    const summary = await drainInvocation(worker, {
      deadline,
      jobTimeoutMs,
      waitForDelayedMs: options.waitForDelayedMs,
      wakeAt: event?.wakeAt,
      register: {
        id: context.awsRequestId,
        until: deadline + safetyMarginMs,
        onError: (error) =>
          log.warn("nimbusq worker: could not register the invocation", { queue, ...errorFields(error) }),
      },
    });
    emit(workerMetricsLine(queue, summary, Date.now() - started, Date.now()));
    const chain = event?.chain ?? 0;
    const step = nextStep(summary, chain, maxChain);
    if (step === "too-short") {
      log.error(
        `nimbusq worker: less than jobTimeoutMs (${jobTimeoutMs} ms) + safetyMarginMs left at start; raise the function timeout`,
        { queue },
      );
    }
    const chained = step === "chain";
    if (chained) {
      invoke ??= createLambdaInvoker();
      await invoke(context.functionName, { queue: options.queue, reason: "chain", chain: chain + 1 });
    }
    log.info("nimbusq worker: drained", {
      queue,
      leased: summary.leased,
      completed: summary.completed,
      failed: summary.failed,
      retried: summary.retried,
      lost_leases: summary.lostLeases,
      stopped_because: summary.stoppedBecause,
      chained,
    });
    return { ...summary, queue: options.queue, chained };
  };
}
