/**
 * Delayed-job lateness through each producer path into an idle deployment (issue 24, point 5): the
 * sweeper is registered but never ticks during the run (its production tick is a minute away), so a
 * delayed job is on time only if the add woke what runs it. Paths: `Queue.add` with a `wake` hook (an
 * asynchronous invoke of the worker with `wakeAt`), the HTTP API (its kick) and an SQS producer
 * trigger (its kick). Jobs come one at a time, 150 ms apart, each due 1 s after its add; lateness is the
 * processor's start minus the due time, on the local stack's in-process "Lambda".
 */
import { Queue } from "../../core/index.ts";
import { sqsProducer } from "../../functions/producers/index.ts";
import { lambdaContext, sqsEvent } from "../support/aws-events.ts";
import { type BenchEnv, flush, sleep, unique, waitUntil } from "./common.ts";
import { type BenchStack, type Distribution, distribution, startStack } from "./latency-stack.ts";

export type WakePath = "queue-wake" | "http" | "producer";
export const wakePaths: WakePath[] = ["queue-wake", "http", "producer"];

export interface WakeLateness {
  path: WakePath;
  jobs: number;
  delayMs: number;
  lateness: Distribution;
}

const delayMs = 1000;
const gapMs = 150;

export async function runWakeLateness(env: BenchEnv, path: WakePath, jobs: number): Promise<WakeLateness> {
  const queue = unique("wake");
  const prefix = unique("p");
  const lateness: number[] = [];
  // A sweeper tick far beyond the run: it is never invoked here.
  const stack = await startStack(
    env,
    queue,
    prefix,
    async (job) => {
      lateness.push(Date.now() - (job.data as { due: number }).due);
    },
    60_000,
  );
  const redis = env.fastRedis;
  const add = await adder(path, queue, prefix, redis, stack);
  try {
    for (let i = 0; i < jobs; i++) {
      await add(Date.now() + delayMs);
      await sleep(gapMs);
    }
    const done = await waitUntil(() => lateness.length >= jobs, delayMs + 15_000, 5);
    if (!done) throw new Error(`wake path ${path}: ${lateness.length} of ${jobs} delayed jobs ran`);
    return { path, jobs, delayMs, lateness: distribution(lateness) };
  } finally {
    await stack.stop();
    await flush(env);
  }
}

type Adder = (due: number) => Promise<void>;

async function adder(
  path: WakePath,
  queue: string,
  prefix: string,
  redis: BenchEnv["fastRedis"],
  stack: BenchStack,
): Promise<Adder> {
  if (path === "queue-wake") {
    const target = new Queue(queue, {
      redis,
      prefix,
      wake: (name, hint) => stack.lambda.invoke(`${name}-worker`, { queue: name, reason: "wake", ...hint }),
    });
    return async (due) => {
      await target.add("late", { due }, { delay: due - Date.now() });
    };
  }
  if (path === "http") {
    return async (due) => {
      const response = await fetch(`${stack.apiUrl}/queues/${queue}/jobs`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "late", data: { due }, opts: { delay: due - Date.now() } }),
      });
      if (response.status !== 202) throw new Error(`POST answered ${response.status}`);
      await response.arrayBuffer();
    };
  }
  const handler = sqsProducer({
    queue,
    redis,
    prefix,
    map: (record) => {
      const { due } = JSON.parse(record.body) as { due: number };
      return { name: "late", data: { due }, opts: { delay: Math.max(1, due - Date.now()) } };
    },
    kick: stack.kick,
  });
  return async (due) => {
    const answer = await handler(sqsEvent([{ body: JSON.stringify({ due }) }]), lambdaContext());
    if (answer.batchItemFailures.length > 0) throw new Error("the producer reported a failed record");
  };
}
