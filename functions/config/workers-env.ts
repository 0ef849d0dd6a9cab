/**
 * Which worker function serves which queue, read from `NIMBUSQ_WORKERS`: comma-separated entries
 * `queue:workerFunction[:batchSize[:maxWorkers]]`, e.g.
 * `email:nimbusq-dev-email-worker:10:2,report:nimbusq-dev-report-worker:2:1`.
 *
 * Queue names cannot hold `:` (BullMQ's rule), so the split is unambiguous as long as the function is
 * named by its name; a function ARN (which holds `:`) needs the JSON form, `NIMBUSQ_SWEEPER_CONFIG`.
 * The sweeper reads every field; the HTTP API the function and maxWorkers, to start a queue's worker at
 * once unless it already has its maximum running.
 */
import {
  defaultMaxWorkers,
  defaultPrefix,
  type HandoffTarget,
  isShardMap,
  type RedisOption,
  type RedisPort,
  toRedisPort,
} from "../../core/index.ts";
import { Checker, checkQueueName, countRunningWorkers } from "../../core/internal.ts";
import { createLambdaInvoker, type Invoke } from "../aws/lambda-invoker.ts";
import { errorFields, logger } from "../log.ts";
import type { SweptQueue } from "../sweeper.ts";
import { prefixFromEnv } from "./prefix-env.ts";
import { redisFromEnv } from "./redis-env.ts";

export type Env = Record<string, string | undefined>;

export const workersVariable = "NIMBUSQ_WORKERS";
/** `off` keeps the HTTP API's and producers' lone adds from handing their job to the invocation they start. */
export const handoffVariable = "NIMBUSQ_HANDOFF";

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

/** Where a kick reads the worker registry: a client (or port) and the key prefix (`bull` by default). */
export interface WorkerRegistryAccess {
  /** A client, a port, or a shard map (the registry of each queue is on its database). */
  redis: RedisOption;
  prefix?: string;
}

/**
 * A kick: starts the queue's worker, `hint.wakeAt` when the job it is for is delayed and due soon.
 * `handoffTarget(queue)` gives a Queue's `handoff` for the same worker function (core/adds/handoff.ts):
 * a lone add then leases its job to the invocation it starts, and counts the running workers itself.
 */
export type WorkerKick = ((queue: string, hint?: { wakeAt?: number }) => Promise<void>) & {
  handoffTarget?: (queue: string) => HandoffTarget | undefined;
};

/**
 * A kick that honours `maxWorkers` as the sweeper does: it first counts the queue's running worker
 * invocations in the registry (one script call) and invokes none when the queue already has its
 * maximum. When the count cannot be read it invokes anyway: the worker's reserved concurrency and
 * the sweeper still cap the workers, and a job left unstarted costs more than one extra invoke.
 * `registry` is a function so a client built from the environment is made at the first kick.
 */
export function cappedWorkerKick(
  queues: readonly SweptQueue[],
  invoke: Invoke,
  registry: () => WorkerRegistryAccess,
  options: { reason?: string; now?: () => number; handoff?: boolean } = {},
): WorkerKick {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const now = options.now ?? Date.now;
  let access: WorkerRegistryAccess | undefined;
  /** The registry's port per database ("" without a shard map). */
  const ports = new Map<string, RedisPort>();
  const portFor = (queue: string): RedisPort => {
    access ??= registry();
    const redis = access.redis;
    const database = isShardMap(redis) ? redis.databaseOf(queue) : "";
    let port = ports.get(database);
    if (!port) {
      // Best effort: a registry Redis cannot answer within a second costs one invoke too many.
      port = toRedisPort(isShardMap(redis) ? redis.database(database) : redis, { windowMs: 1000 });
      ports.set(database, port);
    }
    return port;
  };
  const kick: WorkerKick = async (queue, hint) => {
    const entry = byName.get(queue);
    const workerFunction = entry?.workerFunction;
    if (entry === undefined || workerFunction === undefined) return;
    try {
      const port = portFor(queue);
      const prefix = access?.prefix ?? defaultPrefix;
      const running = await countRunningWorkers(port, prefix, queue, now());
      if (running >= (entry.maxWorkers ?? defaultMaxWorkers)) return;
    } catch (error) {
      logger.warn("nimbusq kick: could not count the running workers; invoking anyway", {
        queue,
        ...errorFields(error),
      });
    }
    await invoke(workerFunction, { queue, reason: options.reason ?? "http", ...hint });
  };
  if (options.handoff === false) return kick;
  kick.handoffTarget = (queue) => {
    const entry = byName.get(queue);
    const workerFunction = entry?.workerFunction;
    if (entry === undefined || workerFunction === undefined) return undefined;
    return {
      maxWorkers: entry.maxWorkers ?? defaultMaxWorkers,
      start: (request) => invoke(workerFunction, request),
    };
  };
  return kick;
}

/**
 * The HTTP API's `kick` from `NIMBUSQ_WORKERS`: an asynchronous invoke of the queue's worker function,
 * so a job added over HTTP starts at once instead of at the sweeper's next pass — skipped when the
 * queue already has its `maxWorkers` (default 10, as the sweeper) running (see `cappedWorkerKick`).
 * The hint (`wakeAt`, a delayed job due soon) goes into the worker's event. Undefined when the
 * variable is unset; queues it does not list are left to the sweeper. The registry is read through
 * `registry`, else a client from `UPSTASH_REDIS_REST_URL`/`_TOKEN` and `NIMBUSQ_PREFIX`. With
 * `handoffTarget` (unless `NIMBUSQ_HANDOFF=off`) a lone add leases its job to the invocation it starts.
 */
export function workerKickFromEnv(
  env: Env = process.env,
  invoke: Invoke = createLambdaInvoker(),
  registry?: WorkerRegistryAccess,
): WorkerKick | undefined {
  const queues = workersFromEnv(env, "workerKickFromEnv");
  if (queues.length === 0) return undefined;
  const prefix = prefixFromEnv(env, "workerKickFromEnv");
  const handoff = env[handoffVariable]?.trim() || "on";
  if (handoff !== "on" && handoff !== "off")
    new Checker("workerKickFromEnv").fail(handoffVariable, 'one of "on", "off"', handoff);
  return cappedWorkerKick(
    queues,
    invoke,
    () =>
      registry ?? {
        redis: redisFromEnv(env),
        ...(prefix ? { prefix } : {}),
      },
    { handoff: handoff === "on" },
  );
}
