/**
 * The worker Lambda: invoked asynchronously with `{ queue }`, it drains the queue until its time is
 * nearly up (core/worker/function-worker.ts) and re-invokes itself when it stops with work left (the
 * invoker loads the AWS SDK only then). A duplicate or lost invocation is harmless: leases are the truth.
 *
 * @example
 * export const handler = workerHandler({ queue: "email", processor: sendEmail, batchSize: 25, concurrency: 10 });
 */
import type { Context } from "aws-lambda";
// A processor given as a file runs in worker threads (Lambda's memory size decides its vCPUs).
import "../sandbox/register.ts";
import {
  createFunctionWorker,
  type FunctionWorkerOptions,
  type InvocationRequest as WorkerEvent,
  type FunctionWorkerResult as WorkerHandlerResult,
} from "../core/index.ts";
import { createLambdaInvoker, type Invoke } from "./aws/lambda-invoker.ts";
import { eventsFromEnv } from "./config/events-env.ts";
import { redisOrEnv } from "./config/redis-env.ts";
import { createLogger, errorFields, logger } from "./log.ts";
import { workerMetricsLine } from "./metrics.ts";
import { setInvocationDeadline } from "./request-deadline.ts";

export type { WorkerEvent, WorkerHandlerResult };

export interface WorkerHandlerOptions<TData, TResult> extends FunctionWorkerOptions<TData, TResult> {
  invoke?: Invoke;
  /** Where log and metric lines go (default stdout). */
  output?: (line: string) => void;
}

type WorkerContext = Pick<Context, "getRemainingTimeInMillis" | "functionName" | "awsRequestId">;

export function workerHandler<TData = unknown, TResult = unknown>(
  options: WorkerHandlerOptions<TData, TResult>,
) {
  const worker = createFunctionWorker(options, {
    connect: () => ({ redis: redisOrEnv(options.redis), events: options.events ?? eventsFromEnv() }),
    onRegisterError: (error) =>
      log.warn("nimbusq worker: could not register the invocation", { queue, ...errorFields(error) }),
  });
  const { queue } = options;
  const log = options.output ? createLogger({ output: options.output }) : logger;
  const emit = options.output ?? ((line: string) => process.stdout.write(`${line}\n`));
  const invoke = options.invoke ?? createLambdaInvoker();

  return async (event: WorkerEvent | undefined, context: WorkerContext): Promise<WorkerHandlerResult> => {
    worker.accept(event);
    setInvocationDeadline(context);
    log.startInvocation(context);
    const run = await worker.run(context.awsRequestId, context.getRemainingTimeInMillis(), event);
    emit(workerMetricsLine(queue, run.result, run.processingMs, Date.now()));
    if (run.problem) log.error(`nimbusq worker: ${run.problem}`, { queue });
    if (run.result.chained) await invoke(context.functionName, run.chainRequest);
    const { leased, completed, failed, retried, lostLeases, stoppedBecause, chained } = run.result;
    const counts = { leased, completed, failed, retried, lost_leases: lostLeases };
    log.info("nimbusq worker: drained", { queue, ...counts, stopped_because: stoppedBecause, chained });
    return run.result;
  };
}
