/**
 * What a failed Redis call means, decided in one place for every caller (worker, sweeper, producers,
 * HTTP API, CLI): transient ("not now": ask again with the same request, whose replay guard makes a
 * second run harmless) or final ("the call itself is wrong", or a quota that no retry lifts). The
 * `@upstash/redis` client carries no HTTP status and users may bring their own client, so where an
 * error has no code the rule reads its text — the phrases Upstash documents and Redis answers.
 *
 * Errors leave here as a RedisCallError whose message names the command (or script), the host and
 * what failed — never the request, which holds job data: the client's own message quotes the whole
 * request (`…, command was: [...]`). The original stays on a non-enumerable `original`.
 */
import { QueueError } from "../errors.ts";

/** Why a call failed, as a short name (also in the message). */
export type FailureKind =
  | "network"
  | "timeout"
  | "unavailable"
  | "loading"
  | "busy"
  | "read-only"
  | "connections"
  | "quota"
  | "too-large"
  | "auth"
  | "script"
  | "wrong-type"
  | "no-script"
  | "out-of-memory"
  | "refused";

export interface Failure {
  kind: FailureKind;
  transient: boolean;
}

/** Socket-level codes Node and undici put on network errors (or on their `cause`). */
const networkCodes = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/**
 * Redis's and Upstash's answers, first match wins. Transient: a server restarting or failing over
 * (LOADING, READONLY, MASTERDOWN, TRYAGAIN, CLUSTERDOWN, "redis request failed"), one busy running a
 * script (BUSY), a proxy's 5xx, Upstash's "max concurrent connections exceeded" and a reset
 * connection. Final: Upstash's size limits and quotas (its docs: max request/record/key size, DB
 * capacity, max (daily) requests limit), authentication, a script's own error, wrong types.
 */
const textRules: readonly [RegExp, Failure][] = [
  [/max (daily |monthly )?requests? limit|capacity quota|quota exceeded/i, final("quota")],
  [/max (request|single record|key|field) size|too large|request entity/i, final("too-large")],
  [/max concurrent connections/i, transient("connections")],
  [/^(?:Command failed: )?NOSCRIPT\b/, final("no-script")],
  [/^(?:Command failed: )?(NOAUTH|WRONGPASS|NOPERM)\b|unauthori[sz]ed|invalid .*token/i, final("auth")],
  [/^(?:Command failed: )?LOADING\b/, transient("loading")],
  [/^(?:Command failed: )?BUSY\b/, transient("busy")],
  [/^(?:Command failed: )?(READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/, transient("read-only")],
  [/^(?:Command failed: )?WRONGTYPE\b/, final("wrong-type")],
  [/^(?:Command failed: )?OOM\b/, final("out-of-memory")],
  [/user_script|Error running script|script attempted/i, final("script")],
  [/\b(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND)\b/, transient("network")],
  [
    /redis request failed|internal server error|service (temporarily )?unavailable|bad gateway|gateway time-?out|connection (reset|closed|lost)|socket hang up|other side closed/i,
    transient("unavailable"),
  ],
  // ioredis over TCP: a connection dropped or still reconnecting, a cluster whose slot map is being
  // refreshed after a failover, a command past its timeout.
  [
    /connection is closed|too many cluster redirections|max retries per request|command timed out|stream isn't writeable/i,
    transient("unavailable"),
  ],
];

function final(kind: FailureKind): Failure {
  return { kind, transient: false };
}
function transient(kind: FailureKind): Failure {
  return { kind, transient: true };
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Whether asking again may help, and why the call failed. */
export function classifyFailure(error: unknown): Failure {
  if (error instanceof RedisCallError) return { kind: error.kind, transient: error.transient };
  if (!(error instanceof Error)) return final("refused");
  if (error instanceof QueueError) return final("refused");
  if (error.name === "TimeoutError" || error.name === "AbortError") return transient("timeout");
  // The request never got an answer: undici's "fetch failed" (the cause says why), a socket error.
  const cause = (error as { cause?: unknown }).cause;
  if (networkCodes.has(codeOf(error) ?? "") || networkCodes.has(codeOf(cause) ?? ""))
    return transient("network");
  if (error.name === "TypeError" && /fetch failed|network|terminated/i.test(error.message))
    return transient("network");
  // A body that is not JSON: a proxy's or load balancer's error page (a 502/503 HTML page).
  if (error.name === "UpstashJSONParseError") return transient("unavailable");
  for (const [pattern, failure] of textRules) if (pattern.test(error.message)) return failure;
  return final("refused");
}

/** Where `@upstash/redis` starts quoting the request: everything after it is command arguments. */
const quotedRequest = /,?\s*command was:[\s\S]*$/;
/** Longest part of the server's own text kept in a message. */
const maxServerText = 300;

/** The server's answer without the quoted request, on one line and short. */
export function serverText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const causeText = typeof cause?.code === "string" ? ` (${cause.code})` : "";
  const oneLine = `${text.replace(quotedRequest, "")}${causeText}`.replace(/\s+/g, " ").trim();
  return oneLine.length > maxServerText ? `${oneLine.slice(0, maxServerText)}…` : oneLine;
}

/**
 * A Redis call failed: `command` (`EVALSHA`, `HGETALL`…) or `script`, on `host`, and whether it was
 * transient (then it has already been retried for the caller's window). Its message never carries the
 * request's arguments; `original` (not enumerable, so never printed or serialised) is the client's
 * own error, for debugging.
 */
export class RedisCallError extends QueueError {
  override name = "RedisCallError" as const;
  readonly kind: FailureKind;
  readonly transient: boolean;
  readonly command: string;
  readonly host: string | undefined;
  /** Calls made, the first included. */
  readonly attempts: number;
  /** Redis's error prefix (`WRONGTYPE`, `ERR`…) or the socket's code (`ECONNREFUSED`), when there is one. */
  readonly code: string | undefined;
  declare readonly original: unknown;
  /** The script, when the call ran one (set by runScript). */
  script?: string;

  constructor(options: {
    command: string;
    host?: string;
    original: unknown;
    failure: Failure;
    attempts: number;
    elapsedMs: number;
  }) {
    const { command, host, failure, attempts, elapsedMs } = options;
    const where = host ? ` on ${host}` : "";
    const tries = attempts > 1 ? `, ${attempts} attempts over ${elapsedMs} ms` : "";
    const nature = failure.transient ? "transient" : "final";
    super(
      `Redis ${command}${where} failed (${nature}, ${failure.kind}${tries}): ${serverText(options.original)}`,
    );
    this.kind = failure.kind;
    this.transient = failure.transient;
    this.command = command;
    this.host = host;
    this.attempts = attempts;
    this.code =
      codeOf(options.original) ??
      codeOf((options.original as { cause?: unknown })?.cause) ??
      /^(?:Command failed: )?([A-Z][A-Z_]{2,})\b/.exec(serverText(options.original))?.[1];
    Object.defineProperty(this, "original", { value: options.original, enumerable: false });
  }

  /** Names the script in the message (runScript knows it; the port saw only its SHA). */
  forScript(script: string): this {
    this.script = script;
    this.message = this.message.replace(/^Redis (EVALSHA|EVAL)(?= )/, `Redis script ${script} ($1)`);
    return this;
  }
}
