/**
 * The HTTP API's options from the environment, read once at cold start: a bad value fails it, naming
 * the variable, instead of every request.
 */
import { type JobsOptions, ValidationError } from "../../core/index.ts";
import { type ApiToken, checkQueueDefaults, type HttpOptions } from "../http/options.ts";
import { eventsFromEnv } from "./events-env.ts";
import { prefixFromEnv } from "./prefix-env.ts";
import { redisFromEnv } from "./redis-env.ts";
import { envWithSecrets, type SecretOptions } from "./secrets.ts";
import { tickFromEnv } from "./tick-env.ts";

type Env = Record<string, string | undefined>;

/** The variables whose values may come from SSM parameters instead (`<NAME>_PARAM`, see secrets.ts). */
export const httpSecretVariables = [
  "UPSTASH_REDIS_REST_TOKEN",
  "NIMBUSQ_API_TOKENS",
  "NIMBUSQ_ADMIN_TOKENS",
] as const;

/**
 * The environment with the HTTP API's secrets resolved (`httpSecretVariables`), for
 * `httpOptionsFromEnv` and `workerKickFromEnv`: what the deployed HTTP entry reads at cold start.
 *
 * @example
 * const env = await httpEnvWithSecrets();
 * export const handler = httpHandler(httpOptionsFromEnv(env));
 */
export async function httpEnvWithSecrets(env: Env = process.env, options: SecretOptions = {}): Promise<Env> {
  return await envWithSecrets(env, httpSecretVariables, options);
}

const list = (text: string | undefined): string[] =>
  (text ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

/**
 * The HTTP API's options from the environment:
 * - `NIMBUSQ_API_TOKENS`: comma-separated tokens; an `admin:` prefix marks an admin token;
 * - `NIMBUSQ_ADMIN_TOKENS`: more admin tokens (comma-separated);
 * - `NIMBUSQ_QUEUES`: the allowed queue names (all when unset), `NIMBUSQ_PREFIX`,
 *   `NIMBUSQ_MAX_BODY_BYTES`, `NIMBUSQ_EVENTS` (the queues' events level),
 * - `NIMBUSQ_QUEUE_DEFAULTS`: per-queue default job options as JSON, e.g.
 *   `{"email":{"attempts":3,"backoff":{"type":"exponential","delay":1000}}}`,
 * - `NIMBUSQ_CORS_ORIGINS`: origins allowed CORS (comma-separated, or `*`; CORS is off when unset),
 * - `NIMBUSQ_API_URL`: the API's public base URL, the `servers` of /openapi.json, and
 *   `UPSTASH_REDIS_REST_URL` / `UPSTASH_REDIS_REST_TOKEN`.
 *
 * @example
 * export const handler = httpHandler({ ...httpOptionsFromEnv(process.env), kick: invokeWorker });
 */
export function httpOptionsFromEnv(env: Env = process.env): HttpOptions {
  const admin = new Set(list(env.NIMBUSQ_ADMIN_TOKENS));
  const plain = new Set<string>();
  for (const entry of list(env.NIMBUSQ_API_TOKENS)) {
    if (entry.startsWith("admin:")) admin.add(entry.slice("admin:".length));
    else plain.add(entry);
  }
  const tokens: ApiToken[] = [
    ...[...admin].map((token) => ({ token, admin: true })),
    ...[...plain].filter((token) => !admin.has(token)).map((token) => ({ token })),
  ];
  if (tokens.length === 0) {
    const rule = "set to comma-separated tokens (or NIMBUSQ_ADMIN_TOKENS set)";
    throw new ValidationError("NIMBUSQ_API_TOKENS", rule, "httpOptionsFromEnv");
  }
  const queues = list(env.NIMBUSQ_QUEUES);
  const corsOrigins = list(env.NIMBUSQ_CORS_ORIGINS);
  const events = eventsFromEnv(env);
  const prefix = prefixFromEnv(env, "httpOptionsFromEnv");
  const maxBody = env.NIMBUSQ_MAX_BODY_BYTES;
  if (maxBody !== undefined && !/^\d+$/.test(maxBody.trim()))
    throw new ValidationError("NIMBUSQ_MAX_BODY_BYTES", "a number of bytes", "httpOptionsFromEnv");
  const queueDefaults = queueDefaultsFromEnv(env.NIMBUSQ_QUEUE_DEFAULTS);
  const apiUrl = env.NIMBUSQ_API_URL?.trim();
  const tickMs = tickFromEnv(env, "httpOptionsFromEnv");
  return {
    redis: redisFromEnv(env),
    tokens,
    ...(queues.length > 0 ? { queues } : {}),
    ...(prefix ? { prefix } : {}),
    ...(maxBody !== undefined ? { maxBodyBytes: Number(maxBody.trim()) } : {}),
    ...(events ? { events } : {}),
    ...(tickMs !== undefined ? { wakeWithinMs: tickMs } : {}),
    ...(queueDefaults ? { queueDefaultJobOptions: queueDefaults } : {}),
    ...(apiUrl ? { servers: [{ url: apiUrl }] } : {}),
    ...(corsOrigins.length > 0
      ? { cors: { origins: corsOrigins.includes("*") ? ("*" as const) : corsOrigins } }
      : {}),
  };
}

/** `NIMBUSQ_QUEUE_DEFAULTS` parsed and checked; undefined when unset or blank. */
function queueDefaultsFromEnv(text: string | undefined): Record<string, JobsOptions> | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const context = "httpOptionsFromEnv: NIMBUSQ_QUEUE_DEFAULTS";
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text; name the variable instead.
    throw new ValidationError("NIMBUSQ_QUEUE_DEFAULTS", 'JSON like {"email":{"attempts":3}}', context);
  }
  checkQueueDefaults(context, parsed, undefined);
  return parsed as Record<string, JobsOptions>;
}
