/**
 * Input checks for everything that reaches Redis. Each check throws a ValidationError naming the
 * field and the rule, before any Redis call, so a rejected add writes nothing.
 */
import { ValidationError } from "./errors.ts";
import { queueOfQualified } from "./redis/keys.ts";
import {
  groupIdProblem,
  jobIdProblem,
  jobNameProblem,
  keyNameProblem,
  queueNameProblem,
} from "./redis/names.ts";
import type {
  BackoffOptions,
  DeadLetterOptions,
  DeduplicationOptions,
  GroupOptions,
  JobsOptions,
  KeepJobs,
  ParentOptions,
} from "./types.ts";

/** Largest valid priority (2^21 - 1), as in BullMQ. */
export const maxPriority = 2_097_151;
/** Delayed scores are exact doubles only while due < 2^41 ms (year 2039). */
export const maxDueTime = 2 ** 41 - 1;
/** Default limit on a job's serialized data, in bytes. */
export const defaultMaxDataBytes = 512 * 1024;

/**
 * BullMQ's stalled-check defaults, the one place worker and sweeper take them from: a lapsed lease is
 * looked for every 30 s, and a job found stalled a second time fails.
 */
export const defaultStalledInterval = 30_000;
export const defaultMaxStalledCount = 1;

/** The sweeper's tick (EventBridge's `rate(1 minute)`), the one default its loop and the wake window take. */
export const defaultTickMs = 60_000;

const knownOptions = new Set<string>([
  "jobId",
  "delay",
  "priority",
  "lifo",
  "attempts",
  "backoff",
  "removeOnComplete",
  "removeOnFail",
  "deduplication",
  "parent",
  "timestamp",
  "stackTraceLimit",
  "keepLogs",
  "sizeLimit",
  "failParentOnFailure",
  "continueParentOnFailure",
  "ignoreDependencyOnFailure",
  "removeDependencyOnFailure",
  "timeout",
  "deadLetter",
  "group",
]);

export class Checker {
  constructor(readonly context: string) {}

  fail(field: string, rule: string, got?: unknown): never {
    const shown = got === undefined ? "" : `, got ${describe(got)}`;
    throw new ValidationError(field, `${rule}${shown}`, this.context);
  }

  integer(field: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      this.fail(field, `an integer from ${min} to ${max}`, value);
    }
    return value;
  }

  boolean(field: string, value: unknown): boolean {
    if (typeof value !== "boolean") this.fail(field, "a boolean", value);
    return value;
  }

  string(field: string, value: unknown, { nonEmpty = true } = {}): string {
    if (typeof value !== "string" || (nonEmpty && value.length === 0)) {
      this.fail(field, nonEmpty ? "a non-empty string" : "a string", value);
    }
    return value;
  }

  object(field: string, value: unknown, allowed: readonly string[]): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      this.fail(field, "an object", value);
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key))
        this.fail(`${field}.${key}`, `one of the known keys (${allowed.join(", ")})`);
    }
    return value as Record<string, unknown>;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return `a value of type ${typeof value}`;
}

/** Queue names end up inside every key name: see `queueNameProblem` (core/redis/names.ts) for the rules. */
export function checkQueueName(name: unknown, context = "Queue", field = "queueName"): string {
  const check = new Checker(context);
  const value = check.string(field, name);
  const problem = queueNameProblem(value);
  if (problem) check.fail(field, problem, value);
  return value;
}

export function checkPrefix(prefix: unknown, context = "Queue"): string {
  return new Checker(context).string("prefix", prefix);
}

/**
 * A custom job id: BullMQ's rules, no key name of the queue, no reserved id space (`jobIdProblem` in
 * core/redis/names.ts). Ids nimbusq makes itself (dead letters, scheduler iterations) never come through here.
 */
export function checkJobId(check: Checker, field: string, value: unknown): string {
  const id = check.string(field, value);
  const problem = jobIdProblem(id);
  if (problem) check.fail(field, problem, id);
  return id;
}

/** A job name: any string, at most 1,000 bytes of UTF-8. */
export function checkJobName(check: Checker, field: string, value: unknown): string {
  const name = check.string(field, value, { nonEmpty: false });
  const problem = jobNameProblem(name);
  if (problem) check.fail(field, problem);
  return name;
}

function checkKeepJobs(check: Checker, field: string, value: unknown): KeepJobs {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return check.integer(field, value, 0);
  const keep = check.object(field, value, ["count", "age", "limit"]);
  if (keep.count !== undefined) check.integer(`${field}.count`, keep.count, 0);
  if (keep.age !== undefined) check.integer(`${field}.age`, keep.age, 1);
  if (keep.limit !== undefined) check.integer(`${field}.limit`, keep.limit, 1);
  return keep as KeepJobs;
}

function checkBackoff(check: Checker, field: string, value: unknown): BackoffOptions {
  if (typeof value === "number") return check.integer(field, value, 0);
  const backoff = check.object(field, value, ["type", "delay", "jitter"]);
  check.string(`${field}.type`, backoff.type);
  if (backoff.delay !== undefined) check.integer(`${field}.delay`, backoff.delay, 0);
  if (backoff.jitter !== undefined) {
    const jitter = backoff.jitter;
    if (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1))
      check.fail(`${field}.jitter`, "a number from 0 to 1", jitter);
  }
  return backoff as BackoffOptions;
}

function checkDeduplication(check: Checker, field: string, value: unknown): DeduplicationOptions {
  const dedup = check.object(field, value, ["id", "ttl", "extend", "replace"]);
  check.string(`${field}.id`, dedup.id);
  if (dedup.ttl !== undefined) check.integer(`${field}.ttl`, dedup.ttl, 1);
  if (dedup.extend !== undefined) check.boolean(`${field}.extend`, dedup.extend);
  if (dedup.replace !== undefined) check.boolean(`${field}.replace`, dedup.replace);
  return dedup as unknown as DeduplicationOptions;
}

function checkParent(check: Checker, field: string, value: unknown): ParentOptions {
  const parent = check.object(field, value, ["id", "queue"]);
  const id = check.string(`${field}.id`, parent.id);
  const keyName = keyNameProblem(id);
  if (keyName) check.fail(`${field}.id`, keyName, id);
  const queue = check.string(`${field}.queue`, parent.queue);
  if (!queue.includes(":") || queue.endsWith(":"))
    check.fail(`${field}.queue`, 'the parent queue as "<prefix>:<queueName>"', queue);
  const queueName = queueNameProblem(queueOfQualified(queue));
  if (queueName)
    check.fail(`${field}.queue`, `"<prefix>:<queueName>" with a valid queueName: ${queueName}`, queue);
  return parent as unknown as ParentOptions;
}

/** `deadLetter: { queue, prefix? }`: a valid queue name, and a prefix when one is given. */
export function checkDeadLetter(check: Checker, field: string, value: unknown): DeadLetterOptions {
  const deadLetter = check.object(field, value, ["queue", "prefix"]);
  const queue = check.string(`${field}.queue`, deadLetter.queue);
  const problem = queueNameProblem(queue);
  if (problem) check.fail(`${field}.queue`, problem, queue);
  if (deadLetter.prefix !== undefined) check.string(`${field}.prefix`, deadLetter.prefix);
  return deadLetter as unknown as DeadLetterOptions;
}

/** A group id: a string that can name the group's key (core/redis/names.ts groupIdProblem). */
export function checkGroupId(check: Checker, field: string, value: unknown): string {
  const id = check.string(field, value);
  const problem = groupIdProblem(id);
  if (problem) check.fail(field, problem, id);
  return id;
}

/** `group: { id }`, BullMQ Pro's job option. */
export function checkGroup(check: Checker, field: string, value: unknown): GroupOptions {
  const group = check.object(field, value, ["id"]);
  checkGroupId(check, `${field}.id`, group.id);
  return group as unknown as GroupOptions;
}

/** Checks job options; unknown keys are refused so a typo never silently does nothing. */
export function checkJobOptions(check: Checker, field: string, value: unknown, now: number): JobsOptions {
  if (value === undefined) return {};
  if (typeof value === "object" && value !== null && "repeat" in value)
    check.fail(
      `${field}.repeat`,
      "absent: repeatable jobs are job schedulers here (BullMQ 6's API) — call queue.upsertJobScheduler(id, { pattern } or { every }, { name, data, opts })",
    );
  const opts = check.object(field, value, [...knownOptions]);
  for (const [key, v] of Object.entries(opts)) {
    if (v === undefined) continue;
    const at = `${field}.${key}`;
    switch (key) {
      case "jobId":
        checkJobId(check, at, v);
        break;
      case "delay":
      case "timestamp":
        check.integer(at, v, 0, maxDueTime);
        break;
      case "priority":
        check.integer(at, v, 0, maxPriority);
        break;
      case "attempts":
      case "stackTraceLimit":
      case "keepLogs":
        check.integer(at, v, 0);
        break;
      case "sizeLimit":
      case "timeout":
        check.integer(at, v, 1);
        break;
      case "backoff":
        checkBackoff(check, at, v);
        break;
      case "removeOnComplete":
      case "removeOnFail":
        checkKeepJobs(check, at, v);
        break;
      case "deduplication":
        checkDeduplication(check, at, v);
        break;
      case "parent":
        checkParent(check, at, v);
        break;
      case "deadLetter":
        checkDeadLetter(check, at, v);
        break;
      case "group":
        checkGroup(check, at, v);
        break;
      default:
        check.boolean(at, v);
    }
  }
  const typed = opts as JobsOptions;
  if (typed.deduplication && typed.parent) {
    check.fail(`${field}.deduplication`, "left out when a parent is set (BullMQ does not combine them)");
  }
  if ((typed.timestamp ?? now) + (typed.delay ?? 0) > maxDueTime) {
    check.fail(
      `${field}.delay`,
      `small enough that timestamp + delay stays below ${maxDueTime} (2^41 ms)`,
      typed.delay,
    );
  }
  return typed;
}

const encoder = new TextEncoder();

/** Serializes job data as BullMQ does (`undefined` → `{}`), refusing what JSON cannot carry. */
export function serializeData(check: Checker, field: string, data: unknown, maxBytes: number): string {
  let text: string | undefined;
  try {
    text = data === undefined ? "{}" : JSON.stringify(data);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    check.fail(field, `JSON-serializable (${reason})`);
  }
  if (text === undefined) check.fail(field, "JSON-serializable", data);
  const bytes = encoder.encode(text).length;
  if (bytes > maxBytes) check.fail(field, `at most ${maxBytes} bytes as JSON`, `${bytes} bytes`);
  return text;
}
