/**
 * Structured logs: one JSON line per entry in AWS Lambda Powertools Logger's shape (`level`,
 * `message`, `timestamp`, `service`, `cold_start`, `function_name`, `function_request_id`,
 * `xray_trace_id`, extra keys at the top level, `error: { name, message, location }`), so CloudWatch
 * Logs Insights queries and Lambda's JSON log-level filter work on them as on Powertools' own. Our own
 * few lines rather than `@aws-lambda-powertools/logger`: every function bundle would carry it (and its
 * load time at each cold start) for the handful of fields used here.
 *
 * Never logged: job data, tokens, Redis command arguments (`errorFields` strips the Upstash client's
 * `command was: [...]`).
 */
import {
  type LogLevel,
  logLevelFromEnv,
  logLevels,
  processEnv,
  serviceNameFromEnv,
  traceIdFromEnv,
} from "./config/log-env.ts";

export type { LogLevel } from "./config/log-env.ts";

/** What a line may carry beyond the message: queue, job id, attempt, counts, error fields. */
export type LogFields = Record<string, unknown>;

/** The Lambda context's fields the logger reads. */
export interface LogContext {
  functionName?: string;
  awsRequestId?: string;
  functionVersion?: string;
  memoryLimitInMB?: string;
  invokedFunctionArn?: string;
}

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** Call at the start of each invocation: sets the request id, trace id and `cold_start`. */
  startInvocation(context: LogContext | undefined): void;
}

export interface LoggerOptions {
  /** `service` of every line (default POWERTOOLS_SERVICE_NAME, else "nimbusq"). */
  service?: string;
  /** Lowest level written (default from NIMBUSQ_LOG_LEVEL / AWS_LAMBDA_LOG_LEVEL, else INFO). */
  level?: LogLevel;
  env?: Record<string, string | undefined>;
  /** Where lines go (default stdout, which Lambda sends to CloudWatch Logs). */
  output?: (line: string) => void;
  clock?: () => number;
}

/** Where Upstash's client quotes the request: everything from here on is command arguments. */
const quotedCommand = /,?\s*command was:[\s\S]*$/;

/** The error's own code, else Redis's error prefix (`ERR`, `NOSCRIPT`, `WRONGTYPE`…). */
function errorCode(error: { code?: unknown }, message: string): string | undefined {
  if (typeof error.code === "string" || typeof error.code === "number") return String(error.code);
  return /^(?:Command failed: )?([A-Z][A-Z_]{2,})\b/.exec(message)?.[1];
}

/** The nimbusq script a failed call ran (core/redis/scripts.ts's runScript tags its errors). */
function scriptName(error: Error): string | undefined {
  const script = (error as { script?: unknown }).script;
  return typeof script === "string" ? script : undefined;
}

/**
 * An error as log fields: its class name, code, message without any quoted command, and where it was
 * thrown (first stack frame). Never the stack text itself, which repeats the message.
 */
export function errorFields(error: unknown): { error: Record<string, string> } {
  if (!(error instanceof Error)) {
    return { error: { name: "NonError", message: `a thrown ${typeof error}` } };
  }
  const message = error.message.replace(quotedCommand, "");
  const code = errorCode(error as { code?: unknown }, message);
  const script = scriptName(error);
  const frame = /\n\s+at (.*)/.exec(error.stack ?? "")?.[1];
  return {
    error: {
      name: error.name,
      message,
      ...(code ? { code } : {}),
      ...(script ? { script } : {}),
      ...(frame ? { location: frame } : {}),
    },
  };
}

function defaultOutput(line: string): void {
  const holder = globalThis as { process?: { stdout?: { write(text: string): unknown } } };
  if (holder.process?.stdout) holder.process.stdout.write(`${line}\n`);
  else console.log(line);
}

/**
 * @example
 * const log = createLogger({ service: "email-worker" });
 * log.startInvocation(context);
 * log.info("drained", { queue: "email", completed: 12 });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const env = options.env ?? processEnv();
  const threshold = logLevels[options.level ?? logLevelFromEnv(env)];
  const output = options.output ?? defaultOutput;
  const clock = options.clock ?? Date.now;
  const service = options.service ?? serviceNameFromEnv(env) ?? "nimbusq";
  let invocations = 0;
  let invocation: LogFields = {};

  const write = (level: LogLevel, message: string, fields?: LogFields) => {
    if (logLevels[level] < threshold) return;
    const line = {
      level,
      message,
      timestamp: new Date(clock()).toISOString(),
      service,
      ...invocation,
      ...fields,
    };
    output(JSON.stringify(line));
  };
  return {
    debug: (message, fields) => write("DEBUG", message, fields),
    info: (message, fields) => write("INFO", message, fields),
    warn: (message, fields) => write("WARN", message, fields),
    error: (message, fields) => write("ERROR", message, fields),
    startInvocation(context) {
      invocations += 1;
      const trace = traceIdFromEnv(env);
      invocation = {
        cold_start: invocations === 1,
        ...(context?.functionName ? { function_name: context.functionName } : {}),
        ...(context?.memoryLimitInMB ? { function_memory_size: Number(context.memoryLimitInMB) } : {}),
        ...(context?.invokedFunctionArn ? { function_arn: context.invokedFunctionArn } : {}),
        ...(context?.awsRequestId ? { function_request_id: context.awsRequestId } : {}),
        ...(trace ? { xray_trace_id: trace } : {}),
      };
    },
  };
}

/** The functions' shared logger (one per container); handlers call `startInvocation` on it. */
export const logger: Logger = createLogger();
