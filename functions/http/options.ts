/**
 * What the HTTP API is configured with, checked once when the app is built (a bad configuration
 * fails the cold start, not a request). config/http-env.ts reads it from the environment.
 */
import {
  defaultPrefix,
  type EventsLevel,
  type HandoffTarget,
  type JobsOptions,
  type RedisOption,
  type RedisRetryOptions,
  ValidationError,
  wakeWithinMs,
} from "../../core/index.ts";
import { Checker, checkJobOptions, checkPrefix, checkQueueName, checkRetry } from "../../core/internal.ts";
import { errorFields, logger } from "../log.ts";
import { retryDeadline } from "../request-deadline.ts";
import { type CorsOptions, type CorsSettings, resolveCors } from "./cors.ts";

/** Why a worker is kicked: `wakeAt` (ms) when the added job is delayed and due within the sweeper's tick. */
export interface KickHint {
  wakeAt?: number;
}

/** A base URL of the API, for the `servers` of /openapi.json (generated clients call it). */
export interface ApiServer {
  url: string;
  description?: string;
}

/** A bearer token; `admin` tokens may also pause, resume, retry and remove. */
export interface ApiToken {
  token: string;
  admin?: boolean;
}

export interface HttpOptions {
  /**
   * An `@upstash/redis` client built by `createRedis` (automatic deserialization off), a TCP client, a
   * port, or a ShardMap over several databases (each queue on its own).
   */
  redis: RedisOption;
  /** Key prefix, `bull` by default. */
  prefix?: string;
  /**
   * How transient Redis failures are retried within a request (core's RedisRetryOptions): by default for
   * 30 s, never past the Lambda invocation's end less a second; what still fails answers 503
   * `retry_later` with Retry-After.
   */
  retry?: RedisRetryOptions;
  /** Accepted bearer tokens; plain strings are non-admin tokens. */
  tokens: ApiToken[] | string[];
  /** The queues the API serves; any valid queue name when left out. */
  queues?: string[];
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * Starts the queue's worker at once (e.g. an asynchronous Lambda invoke), called after a request made
   * jobs ready: an add that created a waiting or prioritized job, a retry, a resume — or, with
   * `hint.wakeAt`, an add that created a delayed job due within a minute, so the worker can wait for
   * it instead of the next sweeper tick. Its failure is logged and otherwise ignored: the sweeper
   * starts workers anyway.
   */
  kick?: HttpKick;
  /**
   * The sweeper's tick (ms, default 60 000; `NIMBUSQ_TICK_MS`): an add whose earliest new delayed job
   * is due within it kicks the worker with `wakeAt`; a later one is promoted on time by a tick.
   */
  wakeWithinMs?: number;
  /** Options merged under each added job's own. */
  defaultJobOptions?: JobsOptions;
  /**
   * Per queue, options merged over `defaultJobOptions` and under each job's own, e.g.
   * `{ email: { attempts: 3, backoff: { type: "exponential", delay: 1000 } } }`. Checked with core's
   * job-option rules when the app is built; `jobId` is refused (every job would get the same id).
   */
  queueDefaultJobOptions?: Record<string, JobsOptions>;
  /** The queues' events level (as their workers'): "all" (default), "final" or "none". */
  events?: EventsLevel;
  /** Where server errors and kick failures go (default: a JSON log line, functions/log.ts). */
  log?: (message: string, error: unknown) => void;
  /** CORS for browsers on these origins (off by default); see cors.ts. */
  cors?: CorsOptions;
  /** Where clients reach this API, listed as the document's `servers` (default: the local stack). */
  servers?: ApiServer[];
}

/**
 * A kick; with `handoffTarget` (nimbusq/functions' worker kick has one), an add of one job ready now
 * leases it to the invocation it starts and sends it along (core/adds/handoff.ts).
 */
export type HttpKick = ((queue: string, hint?: KickHint) => Promise<void>) & {
  handoffTarget?: (queue: string) => HandoffTarget | undefined;
};

/** The options with defaults applied and every value checked. */
export interface HttpSettings {
  redis: RedisOption;
  prefix: string;
  retry: RedisRetryOptions;
  tokens: Required<ApiToken>[];
  queues: ReadonlySet<string> | undefined;
  maxBodyBytes: number;
  kick: HttpKick | undefined;
  wakeWithinMs: number;
  defaultJobOptions: JobsOptions | undefined;
  /** Per queue: `defaultJobOptions` with the queue's own options merged over them. */
  queueDefaultJobOptions: ReadonlyMap<string, JobsOptions>;
  events: EventsLevel | undefined;
  log: (message: string, error: unknown) => void;
  cors: CorsSettings | undefined;
  servers: ApiServer[] | undefined;
}

const defaultMaxBodyBytes = 1024 * 1024;

/**
 * Checks per-queue default job options (queue names by BullMQ's rules, options by core's) and merges
 * each over the global defaults. `context` names where they came from, for the ValidationError.
 */
export function checkQueueDefaults(
  context: string,
  perQueue: unknown,
  global: JobsOptions | undefined,
): Map<string, JobsOptions> {
  const merged = new Map<string, JobsOptions>();
  if (perQueue === undefined) return merged;
  const check = new Checker(context);
  if (typeof perQueue !== "object" || perQueue === null || Array.isArray(perQueue))
    check.fail("queue defaults", "an object { <queue>: <job options> }", perQueue);
  for (const [queue, options] of Object.entries(perQueue as Record<string, unknown>)) {
    checkQueueName(queue, context);
    const field = queue;
    if (typeof options !== "object" || options === null || Array.isArray(options))
      check.fail(field, "an object of job options", options);
    if ("jobId" in (options as object))
      check.fail(`${field}.jobId`, "absent: a default job id would give every job of the queue the same id");
    checkJobOptions(check, field, { ...global, ...(options as JobsOptions) }, Date.now());
    merged.set(queue, { ...global, ...(options as JobsOptions) });
  }
  return merged;
}

function checkServers(servers: ApiServer[] | undefined): ApiServer[] | undefined {
  if (servers === undefined) return undefined;
  if (!Array.isArray(servers)) throw new ValidationError("servers", "an array of { url }", "createHttpApp");
  for (const [index, server] of servers.entries()) {
    if (typeof server?.url !== "string" || !/^(https?:\/\/|\/)/.test(server.url))
      throw new ValidationError(`servers[${index}].url`, "an http(s):// URL or a path", "createHttpApp");
  }
  return servers;
}

export function resolveHttpOptions(options: HttpOptions): HttpSettings {
  if (!Array.isArray(options.tokens))
    throw new ValidationError("tokens", "an array of tokens", "createHttpApp");
  const tokens = (options.tokens as (ApiToken | string)[]).map((entry) =>
    typeof entry === "string" ? { token: entry, admin: false } : { token: entry.token, admin: !!entry.admin },
  );
  if (tokens.length === 0) throw new ValidationError("tokens", "at least one token", "createHttpApp");
  for (const { token } of tokens) {
    if (typeof token !== "string" || token.trim() === "" || token !== token.trim())
      throw new ValidationError("tokens", "non-empty strings without outer spaces", "createHttpApp");
  }
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1)
    throw new ValidationError("maxBodyBytes", "a positive integer (NIMBUSQ_MAX_BODY_BYTES)", "createHttpApp");
  return {
    redis: options.redis,
    prefix: checkPrefix(options.prefix ?? defaultPrefix, "createHttpApp"),
    retry: { deadline: retryDeadline, ...checkRetry(options.retry, "createHttpApp") },
    tokens,
    queues: options.queues && new Set(options.queues.map((name) => checkQueueName(name, "createHttpApp"))),
    maxBodyBytes,
    kick: options.kick,
    wakeWithinMs: new Checker("createHttpApp").integer(
      "wakeWithinMs",
      options.wakeWithinMs ?? wakeWithinMs,
      1000,
    ),
    defaultJobOptions: options.defaultJobOptions,
    queueDefaultJobOptions: checkQueueDefaults(
      "createHttpApp: queueDefaultJobOptions",
      options.queueDefaultJobOptions,
      options.defaultJobOptions,
    ),
    events: options.events,
    log: options.log ?? ((message, error) => logger.error(message, errorFields(error))),
    cors: resolveCors(options.cors),
    servers: checkServers(options.servers),
  };
}
