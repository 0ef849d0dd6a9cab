/**
 * Which worker function serves which queue, read from `NIMBUSQ_WORKERS`: comma-separated entries
 * `queue:workerFunction[:batchSize[:maxWorkers]]`, e.g.
 * `email:nimbusq-dev-email-worker:10:2,report:nimbusq-dev-report-worker:2:1`.
 *
 * Queue names cannot hold `:` (BullMQ's rule), so the split is unambiguous as long as the function is
 * named by its name; a function ARN (which holds `:`) needs the JSON form, `NIMBUSQ_SWEEPER_CONFIG`.
 * The sweeper reads every field; the HTTP API only the function, to start a queue's worker at once.
 */
import { Checker, checkQueueName } from "../../core/validate.ts";
import { createLambdaInvoker, type Invoke } from "../aws/lambda-invoker.ts";
import type { SweptQueue } from "../sweeper.ts";

export type Env = Record<string, string | undefined>;

export const workersVariable = "NIMBUSQ_WORKERS";

/** A positive integer written in decimal, or a ValidationError naming the field. */
function positiveInteger(check: Checker, field: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    check.fail(field, "a positive integer", text);
  }
  return Number(text);
}

/** Throws when two entries name one queue: which worker would serve it is then a guess. */
export function checkUniqueQueues(check: Checker, field: string, queues: SweptQueue[]): void {
  const seen = new Set<string>();
  for (const [index, queue] of queues.entries()) {
    if (seen.has(queue.name)) check.fail(`${field}[${index}]`, "a queue not named before", queue.name);
    seen.add(queue.name);
  }
}

/** The entries of `NIMBUSQ_WORKERS`; none when it is unset or blank. */
export function workersFromEnv(env: Env = process.env, context = "workersFromEnv"): SweptQueue[] {
  const check: Checker = new Checker(context);
  const text = env[workersVariable]?.trim() ?? "";
  if (text === "") return [];
  const queues = text.split(",").map((raw, index): SweptQueue => {
    const field = `${workersVariable}[${index}]`;
    const entry = raw.trim();
    if (entry.includes("arn:")) {
      check.fail(field, "a function name, not an ARN (put ARNs in NIMBUSQ_SWEEPER_CONFIG)", entry);
    }
    const parts = entry.split(":").map((part) => part.trim());
    if (parts.length < 2 || parts.length > 4) {
      check.fail(field, "queue:workerFunction[:batchSize[:maxWorkers]]", entry);
    }
    const [name = "", workerFunction = "", batchSize, maxWorkers] = parts;
    checkQueueName(name, `${context}: ${field}`);
    if (workerFunction === "") check.fail(`${field}.workerFunction`, "a function name", entry);
    return {
      name,
      workerFunction,
      ...(batchSize !== undefined
        ? { batchSize: positiveInteger(check, `${field}.batchSize`, batchSize) }
        : {}),
      ...(maxWorkers !== undefined
        ? { maxWorkers: positiveInteger(check, `${field}.maxWorkers`, maxWorkers) }
        : {}),
    };
  });
  checkUniqueQueues(check, workersVariable, queues);
  return queues;
}

/**
 * The HTTP API's `kick` from `NIMBUSQ_WORKERS`: an asynchronous invoke of the queue's worker function,
 * so a job added over HTTP starts at once instead of at the sweeper's next pass. The hint (`wakeAt`, a
 * delayed job due soon) goes into the worker's event. Undefined when the variable is unset; queues it
 * does not list are left to the sweeper.
 */
export function workerKickFromEnv(
  env: Env = process.env,
  invoke: Invoke = createLambdaInvoker(),
): ((queue: string, hint?: { wakeAt?: number }) => Promise<void>) | undefined {
  const functions = new Map(workersFromEnv(env, "workerKickFromEnv").map((q) => [q.name, q.workerFunction]));
  if (functions.size === 0) return undefined;
  return async (queue, hint) => {
    const workerFunction = functions.get(queue);
    if (workerFunction !== undefined) await invoke(workerFunction, { queue, reason: "http", ...hint });
  };
}
