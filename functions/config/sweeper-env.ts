/**
 * The sweeper's options from the environment, checked strictly at cold start so a bad deployment fails
 * loudly, naming the variable, instead of sweeping the wrong queues.
 *
 * - the queues: `NIMBUSQ_WORKERS` (`queue:workerFunction[:batchSize[:maxWorkers]]`, comma-separated),
 *   or `queues` in `NIMBUSQ_SWEEPER_CONFIG` — one of the two, not both;
 * - `NIMBUSQ_SWEEPER_CONFIG`: JSON with any of `queues` (names, or `{ name, prefix, workerFunction,
 *   batchSize, maxWorkers }`: a queue's own prefix, e.g. a hash tag per queue on Redis Cluster), `eventBus`, `eventSource`, `mode`, `prefix`, `tickMs`, `marginMs`,
 *   `stalledInterval`, `maxStalledCount`;
 * - `NIMBUSQ_EVENT_BUS`, `NIMBUSQ_EVENT_SOURCE`, `NIMBUSQ_SWEEPER_MODE` (`loop` or `once`),
 *   `NIMBUSQ_PREFIX`, `NIMBUSQ_TICK_MS` (config/tick-env.ts): the same settings one by one (a setting
 *   given both ways is refused);
 * - `UPSTASH_REDIS_REST_URL` / `UPSTASH_REDIS_REST_TOKEN`, read when the first tick builds the client.
 *
 * @example
 * export const handler = sweeperHandler(sweeperOptionsFromEnv(process.env));
 */
import { Checker, checkPrefix, checkQueueName } from "../../core/internal.ts";
import type { SweeperOptions, SweptQueue } from "../sweeper.ts";
import { eventsFromEnv, eventsVariable } from "./events-env.ts";
import { prefixFromEnv } from "./prefix-env.ts";
import { tickFromEnv, tickVariable } from "./tick-env.ts";
import { checkUniqueQueues, type Env, workersFromEnv, workersVariable } from "./workers-env.ts";

const context = "sweeperOptionsFromEnv";
const configVariable = "NIMBUSQ_SWEEPER_CONFIG";

/** The variables that set one option each, by the option they set. */
const singleVariables = {
  eventBus: "NIMBUSQ_EVENT_BUS",
  eventSource: "NIMBUSQ_EVENT_SOURCE",
  mode: "NIMBUSQ_SWEEPER_MODE",
  prefix: "NIMBUSQ_PREFIX",
} as const;

const numberKeys = ["tickMs", "marginMs", "stalledInterval", "maxStalledCount"] as const;
const configKeys = ["queues", ...Object.keys(singleVariables), ...numberKeys];

/** The sweeper options the environment can set (clients, clocks and hooks are code, not configuration). */
export type SweeperEnvOptions = Omit<
  SweeperOptions,
  "redis" | "invoke" | "publish" | "clock" | "sleep" | "releaseLock"
>;

export function sweeperOptionsFromEnv(env: Env = process.env): SweeperEnvOptions {
  const check: Checker = new Checker(context);
  const config = readConfig(check, env[configVariable]);
  const options: SweeperEnvOptions = { queues: [] };

  const listed = workersFromEnv(env, context);
  if (listed.length > 0 && config.queues !== undefined) {
    check.fail(workersVariable, `unset when ${configVariable} has "queues" (give the queues one way)`);
  }
  options.queues = config.queues !== undefined ? configQueues(check, config.queues) : listed;
  if (options.queues.length === 0) {
    check.fail(workersVariable, `set, or "queues" given in ${configVariable}: the sweeper needs a queue`);
  }

  for (const [key, variable] of Object.entries(singleVariables) as [keyof typeof singleVariables, string][]) {
    const fromVariable = key === "prefix" ? prefixFromEnv(env, context) : env[variable]?.trim() || undefined;
    const fromConfig = config[key];
    if (fromVariable !== undefined && fromConfig !== undefined) {
      check.fail(variable, `unset when ${configVariable} has "${key}" (give each setting one way)`);
    }
    const value = fromVariable ?? fromConfig;
    if (value === undefined) continue;
    const field = fromVariable !== undefined ? variable : `${configVariable}.${key}`;
    const text = check.string(field, value);
    if (key === "mode") {
      if (text !== "loop" && text !== "once") check.fail(field, '"loop" or "once"', text);
      options.mode = text;
    } else if (key === "prefix") {
      options.prefix = checkPrefix(text, `${context}: ${field}`);
    } else {
      options[key] = text;
    }
  }
  // With no job event written, a bus would be sent nothing: say so at start, not by silence.
  if (options.eventBus !== undefined && eventsFromEnv(env) === "none") {
    check.fail(
      eventsVariable,
      `"all" or "final" while events are forwarded to ${options.eventBus} (or no event bus)`,
    );
  }
  const tick = tickFromEnv(env, context);
  if (tick !== undefined && config.tickMs !== undefined) {
    check.fail(tickVariable, `unset when ${configVariable} has "tickMs" (give each setting one way)`);
  }
  if (tick !== undefined) options.tickMs = tick;
  for (const key of numberKeys) {
    if (config[key] !== undefined) {
      options[key] = check.integer(
        `${configVariable}.${key}`,
        config[key],
        key === "maxStalledCount" ? 0 : 1,
      );
    }
  }
  return options;
}

function readConfig(check: Checker, text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    check.fail(configVariable, `JSON (${error instanceof Error ? error.message : "unreadable"})`);
  }
  return check.object(configVariable, parsed, configKeys);
}

function configQueues(check: Checker, value: unknown): SweptQueue[] {
  const field = `${configVariable}.queues`;
  if (!Array.isArray(value))
    check.fail(field, "an array of queue names or { name, workerFunction, … }", value);
  const queues = value.map((item: unknown, index): SweptQueue => {
    const at = `${field}[${index}]`;
    if (typeof item === "string") return { name: checkQueueName(item, `${context}: ${at}`) };
    const entry = check.object(at, item, ["name", "prefix", "workerFunction", "batchSize", "maxWorkers"]);
    return {
      name: checkQueueName(entry.name, `${context}: ${at}`),
      ...(entry.prefix !== undefined
        ? { prefix: checkPrefix(entry.prefix, `${context}: ${at}.prefix`) }
        : {}),
      ...(entry.workerFunction !== undefined
        ? { workerFunction: check.string(`${at}.workerFunction`, entry.workerFunction) }
        : {}),
      ...(entry.batchSize !== undefined
        ? { batchSize: check.integer(`${at}.batchSize`, entry.batchSize, 1) }
        : {}),
      ...(entry.maxWorkers !== undefined
        ? { maxWorkers: check.integer(`${at}.maxWorkers`, entry.maxWorkers, 1) }
        : {}),
    };
  });
  checkUniqueQueues(check, field, queues);
  return queues;
}
