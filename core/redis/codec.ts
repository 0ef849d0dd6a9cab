/**
 * The one codec boundary: how job options and job hash fields are written and read, in BullMQ 6's
 * wire format. BullMQ's short option keys and hash field names appear only here.
 */
import type { JobSchedulerJson, JobsOptions } from "../types.ts";

/** Public option name → the short key BullMQ stores in the job's `opts` JSON. */
const shortOptionKeys = {
  deduplication: "de",
  failParentOnFailure: "fpof",
  continueParentOnFailure: "cpof",
  ignoreDependencyOnFailure: "idof",
  removeDependencyOnFailure: "rdof",
  keepLogs: "kl",
} as const;

const longOptionKeys: Record<string, string> = Object.fromEntries(
  Object.entries(shortOptionKeys).map(([long, short]) => [short, long]),
);

/**
 * Options with BullMQ's short keys and nothing added (BullMQ's `optsAsJSON`): what a job scheduler's
 * template `opts` holds, and what its first iteration's `opts` is built from.
 */
export function shortOptions(opts: Record<string, unknown>): Record<string, unknown> {
  const stored: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) {
    if (value === undefined) continue;
    stored[(shortOptionKeys as Record<string, string>)[key] ?? key] = value;
  }
  return stored;
}

/** The job's `opts` JSON as BullMQ stores it: `attempts` always present, a numeric backoff expanded. */
export function encodeOptions(opts: JobsOptions): string {
  const stored: Record<string, unknown> = { attempts: 0, ...shortOptions(opts as Record<string, unknown>) };
  if (typeof stored.backoff === "number") stored.backoff = { type: "fixed", delay: stored.backoff };
  return JSON.stringify(stored);
}

/** Reads a stored `opts` JSON back into public names; unknown keys pass through untouched. */
export function decodeOptions(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  const stored = JSON.parse(text) as Record<string, unknown>;
  const opts: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored)) {
    if (key === "tm" || key === "omc") {
      const telemetry = (opts.telemetry ?? {}) as Record<string, unknown>;
      telemetry[key === "tm" ? "metadata" : "omitContext"] = value;
      opts.telemetry = telemetry;
    } else {
      opts[longOptionKeys[key] ?? key] = value;
    }
  }
  return opts;
}

/** The child-failure policy flags of the `parent` hash field, from the job's options. */
export function parentField(parentId: string, parentQueue: string, opts: JobsOptions): string {
  const field: Record<string, unknown> = { id: parentId, queueKey: parentQueue };
  if (opts.failParentOnFailure) field.fpof = true;
  if (opts.continueParentOnFailure) field.cpof = true;
  if (opts.ignoreDependencyOnFailure) field.idof = true;
  if (opts.removeDependencyOnFailure) field.rdof = true;
  return JSON.stringify(field);
}

/** A job hash as stored, field → value. */
export type StoredJob = Record<string, string>;

export function hashFromFlat(flat: readonly string[]): StoredJob {
  const hash: StoredJob = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i] as string] = flat[i + 1] as string;
  return hash;
}

function parseOr<T>(text: string | undefined, fallback: T): T | unknown {
  if (text === undefined) return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

const int = (text: string | undefined): number | undefined =>
  text === undefined ? undefined : Number.parseInt(text, 10);

/** The readable fields of a stored job, decoded as BullMQ's `Job.fromJSON` decodes them. */
export interface DecodedJob {
  name: string;
  data: unknown;
  opts: Record<string, unknown>;
  timestamp: number;
  delay: number;
  priority: number;
  progress: unknown;
  returnvalue: unknown;
  failedReason: string | undefined;
  stacktrace: string[];
  attemptsMade: number;
  attemptsStarted: number;
  stalledCounter: number;
  processedOn: number | undefined;
  finishedOn: number | undefined;
  processedBy: string | undefined;
  parentKey: string | undefined;
  parent: { id: string; queueKey: string } | undefined;
  repeatJobKey: string | undefined;
  deduplicationId: string | undefined;
  deferredFailure: string | undefined;
}

export function decodeJob(hash: StoredJob): DecodedJob {
  return {
    name: hash.name ?? "",
    data: JSON.parse(hash.data ?? "{}"),
    opts: decodeOptions(hash.opts),
    timestamp: int(hash.timestamp) ?? 0,
    delay: int(hash.delay) ?? 0,
    priority: int(hash.priority) ?? 0,
    progress: hash.progress === undefined ? 0 : JSON.parse(hash.progress),
    returnvalue: parseOr(hash.returnvalue, undefined),
    failedReason: hash.failedReason,
    stacktrace: (parseOr(hash.stacktrace, []) as string[] | null) ?? [],
    // BullMQ prefers a legacy `attemptsMade` field when one exists.
    attemptsMade: int(hash.attemptsMade ?? hash.atm) ?? 0,
    attemptsStarted: int(hash.ats) ?? 0,
    stalledCounter: int(hash.stc) ?? 0,
    processedOn: int(hash.processedOn),
    finishedOn: int(hash.finishedOn),
    processedBy: hash.pb,
    parentKey: hash.parentKey,
    parent: hash.parent === undefined ? undefined : JSON.parse(hash.parent),
    repeatJobKey: hash.rjk,
    deduplicationId: hash.deid,
    deferredFailure: hash.defa,
  };
}

/**
 * A scheduler hash (`{P}repeat:<id>`) read as BullMQ's `getJobScheduler` reads it: numbers parsed,
 * fields that are absent or empty left out; undefined when the hash is empty.
 */
export function decodeScheduler(id: string, hash: StoredJob, next: number): JobSchedulerJson | undefined {
  if (Object.keys(hash).length === 0) return undefined;
  const scheduler: JobSchedulerJson = { key: id, name: hash.name as string, next };
  if (hash.ic) scheduler.iterationCount = int(hash.ic);
  if (hash.limit) scheduler.limit = int(hash.limit);
  if (hash.startDate) scheduler.startDate = int(hash.startDate);
  if (hash.endDate) scheduler.endDate = int(hash.endDate);
  if (hash.tz) scheduler.tz = hash.tz;
  if (hash.pattern) scheduler.pattern = hash.pattern;
  if (hash.every) scheduler.every = int(hash.every);
  if (hash.offset) scheduler.offset = int(hash.offset);
  if (hash.data || hash.opts) {
    scheduler.template = {};
    if (hash.data) scheduler.template.data = JSON.parse(hash.data);
    if (hash.opts) scheduler.template.opts = decodeOptions(hash.opts);
  }
  return scheduler;
}

/** A stored job's group id (opts.group.id, BullMQ Pro's groups), or "". */
export function groupIdOf(opts: Record<string, unknown>): string {
  const group = opts.group as { id?: unknown } | undefined;
  return typeof group?.id === "string" ? group.id : "";
}

/** Length-prefixed strings ("<bytes>:<text>" each), what the scripts' decodeIds reads. */
export function encodeIds(texts: readonly string[]): string {
  return texts.map((text) => `${utf8Length(text)}:${text}`).join("");
}

/** Bytes of a string in UTF-8, which is how Lua's `#` measures the strings Redis hands a script. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: two UTF-16 units, four bytes.
      bytes += 2;
      i += 1;
    } else bytes += 2;
  }
  return bytes;
}
