/**
 * The demo queues: an email queue whose sends fail now and then (retried with exponential backoff)
 * and always to a `bounce@…` address (so the job fails for good and lands in the dead-letter queue
 * `email-dlq`), and a report queue whose jobs report progress and write logs. `npm start` runs them locally
 * (infra/local/stack.ts) and the deployed demo workers run them on Lambda (entries/).
 */
import type { ActiveJob, DeadLetterOptions, JobsOptions, Processor } from "../../core/index.ts";

export interface DemoQueue {
  name: string;
  batchSize: number;
  concurrency: number;
  maxWorkers: number;
  jobTimeoutMs: number;
  processor: Processor;
  defaultJobOptions: JobsOptions;
  /** Where the worker copies jobs that fail for good. */
  deadLetter?: DeadLetterOptions;
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

/** A flaky mail provider: a third of the sends fail with a temporary error, every one to `bounce@…`. */
async function sendEmail(job: ActiveJob): Promise<unknown> {
  const { to } = job.data as { to?: string };
  await pause(50 + Math.random() * 150, job.signal);
  if (to?.startsWith("bounce@")) throw new Error(`SMTP 550 5.1.1 mailbox unavailable: ${to}`);
  if (Math.random() < 0.33) throw new Error(`SMTP 451 4.7.1 temporary failure sending to ${to ?? "?"}`);
  return { messageId: `<${crypto.randomUUID()}@demo.nimbusq>`, to };
}

/** A report built in steps, with progress and a log line per step. */
async function buildReport(job: ActiveJob): Promise<unknown> {
  const steps = ["query sales", "aggregate", "render charts", "write PDF", "upload"];
  for (const [i, step] of steps.entries()) {
    await job.log(`step ${i + 1}/${steps.length}: ${step}`);
    await pause(300, job.signal);
    await job.updateProgress(Math.round(((i + 1) / steps.length) * 100));
  }
  return { pages: 3 + Math.floor(Math.random() * 5), month: (job.data as { month?: string }).month };
}

export const demoQueues: DemoQueue[] = [
  {
    name: "email",
    batchSize: 10,
    concurrency: 5,
    maxWorkers: 2,
    jobTimeoutMs: 10_000,
    processor: sendEmail,
    defaultJobOptions: { attempts: 3, backoff: { type: "exponential", delay: 500 } },
    deadLetter: { queue: "email-dlq" },
  },
  {
    name: "report",
    batchSize: 2,
    concurrency: 2,
    maxWorkers: 1,
    jobTimeoutMs: 20_000,
    processor: buildReport,
    defaultJobOptions: { attempts: 2, removeOnComplete: { count: 100 } },
  },
];

/** The demo queue of that name; throws for a name that is not one. */
export function demoQueue(name: string): DemoQueue {
  const queue = demoQueues.find((q) => q.name === name);
  if (!queue)
    throw new Error(`no demo queue named "${name}" (there are: ${demoQueues.map((q) => q.name).join(", ")})`);
  return queue;
}
