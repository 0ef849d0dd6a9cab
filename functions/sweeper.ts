/**
 * The sweeper Lambda, ticked by EventBridge every minute: core's sweeper loop (core/sweeper/sweeper.ts)
 * with the request id as its lock token and the remaining time as its limit, workers started by Lambda's
 * asynchronous Invoke, events forwarded to an EventBridge bus, each queue's metrics as an EMF line.
 *
 * @example
 * export const handler = sweeperHandler({ queues: [{ name: "email", workerFunction: "email-worker" }] });
 */
import type { Context } from "aws-lambda";
import { createSweeper, type RedisOption, type SweeperSettings } from "../core/index.ts";
import { busPublisher } from "./aws/event-entry.ts";
import type { Publish } from "./aws/event-publisher.ts";
import { type Invoke, workerStarter } from "./aws/lambda-invoker.ts";
import { metricsEveryFromEnv } from "./config/metrics-env.ts";
import { redisOrEnv } from "./config/redis-env.ts";
import { createLogger, errorFields, logger } from "./log.ts";
import { queueMetricsLine } from "./metrics.ts";
import { setInvocationDeadline } from "./request-deadline.ts";

export type { SweeperResult, SweptQueue } from "../core/index.ts";
export { eventEntry } from "./aws/event-entry.ts";

export interface SweeperOptions extends SweeperSettings {
  /** A client, or a ShardMap: one sweeper loop per database over the queues it holds. */
  redis?: RedisOption;
  /** EventBridge bus to forward queue events to; none disables forwarding. */
  eventBus?: string;
  eventSource?: string;
  /** Where log and metric lines go (default stdout). Metrics: default NIMBUSQ_METRICS_EVERY, else 5. */
  output?: (line: string) => void;
  invoke?: Invoke;
  publish?: Publish;
}

export function sweeperHandler(options: SweeperOptions = {} as SweeperOptions) {
  const log = options.output ? createLogger({ output: options.output }) : logger;
  const emit = options.output ?? ((line: string) => process.stdout.write(`${line}\n`));
  const sweeper = createSweeper(
    { ...options, metricsEveryPasses: options.metricsEveryPasses ?? metricsEveryFromEnv() },
    {
      connect: () => redisOrEnv(options.redis),
      startWorkers: workerStarter(options.invoke),
      publish: busPublisher(options),
      reportMetrics: (reports, now) => {
        for (const report of reports) emit(queueMetricsLine(report.queue, report, now));
      },
      failed: (error, passes) =>
        log.error("nimbusq sweeper: the pass failed", { passes, ...errorFields(error) }),
    },
  );

  return async (_event: unknown, context: Pick<Context, "getRemainingTimeInMillis" | "awsRequestId">) => {
    setInvocationDeadline(context);
    log.startInvocation(context);
    const remainingMs = context.getRemainingTimeInMillis();
    const result = await sweeper.run({ token: context.awsRequestId, remainingMs });
    for (const { database, prefix, error } of result.failures ?? [])
      log.error("nimbusq sweeper: a loop failed", {
        ...(database ? { database } : {}),
        prefix,
        ...errorFields(error),
      });
    const { failures, ...counts } = result;
    log.debug("nimbusq sweeper: done", {
      ...counts,
      invoked: JSON.stringify(result.invoked),
      failed_loops: failures?.length ?? 0,
    });
    return result;
  };
}
