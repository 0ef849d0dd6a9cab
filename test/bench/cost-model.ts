/**
 * Section 8: dollars per million jobs at list prices, from the measured command counts, next to
 * SQS + Lambda and QStash + Lambda doing the same work. Pure arithmetic over the other sections'
 * results; every price and assumption is named here and printed with the tables.
 */
import type { CostResult } from "./cost.ts";
import type { IdleResult } from "./idle.ts";

export const prices = {
  /** Upstash Redis pay-as-you-go: $0.20 per 100K commands (reference upstash-rest.md §3.1). */
  upstashPerCommand: 0.2 / 100_000,
  /** AWS Lambda requests: $0.20 per 1M. */
  lambdaPerRequest: 0.2 / 1_000_000,
  /** AWS Lambda arm64 duration: $0.0000133334 per GB-second. */
  lambdaPerGbSecond: 0.0000133334,
  /** SQS standard: $0.40 per 1M requests (64 KB chunks; small messages). */
  sqsPerRequest: 0.4 / 1_000_000,
  /**
   * QStash pay-as-you-go: $1 per 100K messages — list price at time of writing as given by the
   * reference (serverless-aws-and-peers.md §3, from a third-party compiled list; may be stale).
   */
  qstashPerMessage: 1 / 100_000,
};

export const assumptions = {
  memoryGb: 0.25,
  /** One HTTP round trip from a Lambda to Upstash in the same region (ms). */
  redisRoundTripMs: 10,
  /** nimbusq: jobs per lease in the steady case; SQS: the event source mapping's batch size. */
  nimbusqBatch: 50,
  sqsBatch: 10,
  /** Per-job processor time in the second variant (I/O-bound, run concurrently within a batch). */
  ioJobMs: 100,
  hoursPerMonth: 730,
  /** The sweeper's idle tick: one sweep request. */
  sweeperTickRequests: 1,
};

export interface OptionCost {
  option: string;
  /** Queue-side charges per 1M jobs: Upstash commands, SQS requests or QStash messages. */
  queue: number;
  queueDetail: string;
  lambdaRequests: number;
  /** Lambda duration charges with a no-op processor and with ioJobMs per job. */
  lambdaDurationNoop: number;
  lambdaDurationIo: number;
  totalNoop: number;
  totalIo: number;
}

export interface CostScenario {
  name: string;
  description: string;
  options: OptionCost[];
}

export interface CostModel {
  scenarios: CostScenario[];
  monthly: { option: string; perQueue: number; detail: string }[];
}

const million = 1_000_000;

function lambda(invocationsPerJob: number, msPerInvocation: number): { requests: number; duration: number } {
  return {
    requests: million * invocationsPerJob * prices.lambdaPerRequest,
    duration:
      million *
      invocationsPerJob *
      assumptions.memoryGb *
      (Math.max(1, msPerInvocation) / 1000) *
      prices.lambdaPerGbSecond,
  };
}

function option(
  name: string,
  queue: number,
  queueDetail: string,
  invocationsPerJob: number,
  msNoop: number,
  msIo: number,
): OptionCost {
  const noop = lambda(invocationsPerJob, msNoop);
  const io = lambda(invocationsPerJob, msIo);
  return {
    option: name,
    queue,
    queueDetail,
    lambdaRequests: noop.requests,
    lambdaDurationNoop: noop.duration,
    lambdaDurationIo: io.duration,
    totalNoop: queue + noop.requests + noop.duration,
    totalIo: queue + io.requests + io.duration,
  };
}

/** Undefined when the cost section is missing the rows the model needs. */
export function costModel(cost: CostResult | undefined, idle: IdleResult | undefined): CostModel | undefined {
  if (!cost) return undefined;
  const a = assumptions;
  const row = (pattern: string, batch: number) =>
    cost.lifecycle.find((r) => r.pattern === pattern && r.batch === batch);
  const steady = row("backlog", a.nimbusqBatch) ?? row("backlog", 10);
  const sparse = row("arrivals", 1);
  if (!steady || !sparse) return undefined;
  const rtt = a.redisRoundTripMs;
  const perInvocation = cost.invocationOverhead;
  // A worker invocation registers and unregisters itself (2 requests), then leases and acks (2 per batch).
  const nimbusqMs = (batches: number, batchIoMs: number) => 2 * rtt + batches * (2 * rtt + batchIoMs);
  const scenarios: CostScenario[] = [];

  {
    const b = steady.batch;
    const commands = steady.nimbusq.billedPerJob + perInvocation / b;
    const sqsRequests = 3 / a.sqsBatch;
    scenarios.push({
      name: `Steady backlog (nimbusq batch ${b}, SQS batch ${a.sqsBatch})`,
      description: `Jobs added in bulk and processed in full batches; one worker invocation per batch (a pessimistic count: one invocation usually drains many batches). Producers send in batches (SendMessageBatch of ${a.sqsBatch}).`,
      options: [
        option(
          "nimbusq (Upstash + Lambda)",
          million * commands * prices.upstashPerCommand,
          `${round2(commands)} commands/job (measured ${steady.nimbusq.billedPerJob} + ${perInvocation}/${b} per invocation)`,
          1 / b,
          nimbusqMs(1, 0),
          nimbusqMs(1, a.ioJobMs),
        ),
        option(
          "SQS + Lambda",
          million * sqsRequests * prices.sqsPerRequest,
          `${round2(sqsRequests)} requests/job (send, receive, delete, each per ${a.sqsBatch})`,
          1 / a.sqsBatch,
          0,
          a.ioJobMs,
        ),
        option(
          "QStash + Lambda",
          million * prices.qstashPerMessage,
          "1 message/job; one HTTP delivery (invocation) per message",
          1,
          0,
          a.ioJobMs,
        ),
        option(
          "BullMQ on Upstash (Redis only; worker host not priced)",
          million *
            (cost.lifecycle.find((r) => r.pattern === "backlog" && r.batch === b)?.bullmq.billedPerJob ?? 0) *
            prices.upstashPerCommand,
          `${cost.lifecycle.find((r) => r.pattern === "backlog" && r.batch === b)?.bullmq.billedPerJob} commands/job (measured, concurrency ${b})`,
          0,
          0,
          0,
        ),
      ],
    });
  }
  {
    const commands = sparse.nimbusq.billedPerJob + perInvocation;
    scenarios.push({
      name: "Sparse arrivals (each job alone)",
      description:
        "Every job arrives on its own and is processed before the next: nimbusq's HTTP add kicks one worker invocation per job; SQS sends, receives and deletes each message alone; QStash delivers each message.",
      options: [
        option(
          "nimbusq (Upstash + Lambda)",
          million * commands * prices.upstashPerCommand,
          `${round2(commands)} commands/job (measured ${sparse.nimbusq.billedPerJob} + ${perInvocation} per invocation)`,
          1,
          nimbusqMs(1, 0),
          nimbusqMs(1, a.ioJobMs),
        ),
        option("SQS + Lambda", million * 3 * prices.sqsPerRequest, "3 requests/job", 1, 0, a.ioJobMs),
        option("QStash + Lambda", million * prices.qstashPerMessage, "1 message/job", 1, 0, a.ioJobMs),
        option(
          "BullMQ on Upstash (Redis only; worker host not priced)",
          million * sparse.bullmq.billedPerJob * prices.upstashPerCommand,
          `${sparse.bullmq.billedPerJob} commands/job (measured, concurrency 1)`,
          0,
          0,
          0,
        ),
      ],
    });
  }
  const monthly: CostModel["monthly"] = [];
  const sweeper = idle?.sweeper.find((s) => s.mode === "loop" && s.queues === 1 && s.eventForwarding);
  if (sweeper) {
    const ticks = 60 * a.hoursPerMonth;
    const tickLambda = lambda(1, a.sweeperTickRequests * a.redisRoundTripMs);
    const redis = sweeper.perHour * a.hoursPerMonth * prices.upstashPerCommand;
    const lambdaCost = (ticks / million) * (tickLambda.requests + tickLambda.duration);
    monthly.push({
      option: "nimbusq sweeper (1 queue, loop mode, event forwarding)",
      perQueue: redis + lambdaCost,
      detail: `${sweeper.perHour} commands/h × ${a.hoursPerMonth} h = $${round2(redis)}; ${ticks} ticks × ~${a.redisRoundTripMs} ms = $${lambdaCost.toFixed(3)} Lambda`,
    });
  }
  const bullIdle = idle?.bullmq.find((b) => b.workers === 1);
  if (bullIdle) {
    const redis = bullIdle.perHourPerQueue * a.hoursPerMonth * prices.upstashPerCommand;
    monthly.push({
      option: "BullMQ idle Worker (1 queue)",
      perQueue: redis,
      detail: `${bullIdle.perHourPerQueue} commands/h × ${a.hoursPerMonth} h; plus the always-on host it runs on (not priced)`,
    });
  }
  monthly.push({
    option: "SQS + Lambda event source mapping",
    perQueue: Number.NaN,
    detail:
      "not measured: the mapping's pollers long-poll an empty queue with ReceiveMessage calls that are billed as SQS requests",
  });
  return { scenarios, monthly };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
