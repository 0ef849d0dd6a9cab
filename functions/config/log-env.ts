/**
 * What the logger (log.ts) reads from the environment: its level, its `service` and, at each
 * invocation, X-Ray's trace id. Lambda sets `AWS_LAMBDA_LOG_LEVEL` (the function's
 * ApplicationLogLevel) and `_X_AMZN_TRACE_ID`; the others are ours or Powertools' names.
 */
import { ValidationError } from "../../core/index.ts";

export const logLevels = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 100 } as const;
export type LogLevel = keyof typeof logLevels;

type Env = Record<string, string | undefined>;

export const logLevelVariable = "NIMBUSQ_LOG_LEVEL";

/**
 * The process's environment, or an empty one where there is no `process` (an edge runtime): the
 * logger is imported by everything in functions/, so reading it must never throw.
 */
export function processEnv(): Env {
  return (globalThis as { process?: { env?: Env } }).process?.env ?? {};
}

/** Powertools' and Lambda's level names mapped onto ours (TRACE is DEBUG, FATAL and CRITICAL ERROR). */
function parseLevel(text: string | undefined): LogLevel | undefined {
  const upper = text?.trim().toUpperCase();
  if (upper === "TRACE") return "DEBUG";
  if (upper === "FATAL" || upper === "CRITICAL") return "ERROR";
  return upper && upper in logLevels ? (upper as LogLevel) : undefined;
}

/**
 * The level: the stricter of NIMBUSQ_LOG_LEVEL and AWS_LAMBDA_LOG_LEVEL (Lambda drops JSON lines below
 * the latter anyway), INFO when neither is set. A NIMBUSQ_LOG_LEVEL that names no level is refused;
 * an AWS_LAMBDA_LOG_LEVEL we do not know is Lambda's to define and is left out.
 */
export function logLevelFromEnv(env: Env = processEnv()): LogLevel {
  const own = env[logLevelVariable];
  const ownLevel = parseLevel(own);
  if (own !== undefined && own.trim() !== "" && ownLevel === undefined) {
    const names = [...Object.keys(logLevels), "TRACE", "FATAL", "CRITICAL"].join(", ");
    throw new ValidationError(logLevelVariable, `one of ${names} (got "${own.trim()}")`, "the environment");
  }
  const levels = [ownLevel, parseLevel(env.AWS_LAMBDA_LOG_LEVEL)].filter(
    (level): level is LogLevel => level !== undefined,
  );
  if (levels.length === 0) return "INFO";
  return levels.reduce((a, b) => (logLevels[a] >= logLevels[b] ? a : b));
}

/** The `service` field: POWERTOOLS_SERVICE_NAME, as Powertools reads it, else undefined. */
export function serviceNameFromEnv(env: Env = processEnv()): string | undefined {
  const name = env.POWERTOOLS_SERVICE_NAME?.trim();
  return name ? name : undefined;
}

/** X-Ray's trace id (the `Root=` of `_X_AMZN_TRACE_ID`, which Lambda sets per invocation). */
export function traceIdFromEnv(env: Env = processEnv()): string | undefined {
  return /Root=([^;]+)/.exec(env._X_AMZN_TRACE_ID ?? "")?.[1];
}
