/**
 * The rules for what becomes part of a Redis key name: queue names and custom job ids (and the length
 * of job names). One source for the TS API, the HTTP API, producer triggers, flows, dead-letter
 * targets and the sweeper's queue list; `validate.ts` turns a problem into a ValidationError.
 *
 * Each function answers the rule a value breaks ("a name without …"), or undefined when it is valid.
 */
import { utf8Length } from "./codec.ts";
import { jobKeySuffix, queueKeySuffix } from "./keys.ts";

/** Longest queue name, in bytes of UTF-8. */
export const maxQueueNameBytes = 200;
/** Longest job name, in bytes of UTF-8. */
export const maxJobNameBytes = 1000;
/** Longest custom job id, in characters (BullMQ's own limit as nimbusq kept it). */
export const maxJobIdLength = 1024;

/**
 * Key names BullMQ and nimbusq keep directly under a queue's prefix `{P}` (besides job keys): the
 * queue's own keys, BullMQ 4's leftovers that obliterate still deletes, and the heads of the key
 * families `{P}<head>:…`. A job with such an id would write its hash over the key, or own keys of
 * the family through its sub-keys (job `metrics` has `{P}metrics:failed`, BullMQ's failed-metrics hash;
 * job `de` has `{P}de:lock`, the window of deduplication id `lock`).
 */
export const queueKeyNames: readonly string[] = [
  ...Object.values(queueKeySuffix),
  "delay",
  "priority",
  "metrics",
  "de",
  "dn",
  "dl",
  "nq",
  "nq-req",
];

/**
 * Job-id spaces written by BullMQ or nimbusq themselves, never by a producer: a user id there would
 * take the place of (or shadow) what the writer makes. Their writers (the ack script for dead letters,
 * the scheduler scripts for iterations, BullMQ workers for metrics) never pass through these checks.
 */
export const reservedIdSpaces: readonly { space: string; owner: string }[] = [
  { space: "dl:", owner: "nimbusq's dead letters, written only by a failing job's ack" },
  { space: "repeat:", owner: "job schedulers and their iterations, written only by the scheduler" },
  { space: "metrics:", owner: "BullMQ's metrics keys" },
  { space: "de:", owner: "deduplication windows" },
  { space: "dn:", owner: "deduplication's next jobs" },
  { space: "nq:", owner: "nimbusq's own keys" },
  { space: "nq-req:", owner: "nimbusq's replay guards" },
];

/** The names of a job's sub-keys (`lock`, `logs`, …), as the last segment of a 3-segment id. */
const subKeyNames = Object.values(jobKeySuffix).map((suffix) => suffix.slice(1));

// With the `u` flag a surrogate class matches only unpaired halves, which UTF-8 cannot carry.
const loneSurrogate = /[\uD800-\uDFFF]/u;
const controlCharacter = /\p{Cc}/u;
/**
 * Characters that print as nothing or reorder what follows: zero-width spaces and joiners, the word
 * joiner and invisible operators, the byte-order mark, and the bidirectional marks, embeddings,
 * overrides and isolates. A name or id holding one looks like another in every log and dashboard.
 */
const invisibleCharacters = "\\u061C\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFEFF";
const invisibleCharacter = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/u;
const invisibleRule = "no zero-width or bidirectional-control characters (U+200B–U+200F, U+202A–U+202E, …)";
const globCharacter = /[*?[\]\\]/;

/** What a queue name breaks, or undefined. The name sits in every key: `<prefix>:<queueName>:…`. */
export function queueNameProblem(name: string): string | undefined {
  if (name === "") return "a non-empty string";
  const bytes = utf8Length(name);
  if (bytes > maxQueueNameBytes) return `at most ${maxQueueNameBytes} bytes of UTF-8 (got ${bytes} bytes)`;
  if (loneSurrogate.test(name)) return "well-formed Unicode (no lone surrogate)";
  if (controlCharacter.test(name)) return "a name without control characters (NUL, CR, LF, …)";
  if (invisibleCharacter.test(name)) return `a name with ${invisibleRule}`;
  if (name.includes(":")) return 'a name without ":" (BullMQ\'s rule: it separates key parts)';
  if (name.includes("/")) return 'a name without "/"';
  if (name === "." || name === "..") return 'a name other than "." and ".."';
  if (globCharacter.test(name)) return "a name without the glob characters * ? [ ] \\";
  if (name.includes("{") || name.includes("}"))
    return 'a name without "{" or "}" (put a cluster hash tag in the prefix)';
  if (name === "nq" || name === "nq-req")
    return 'a name other than "nq" and "nq-req" (nimbusq keeps its per-prefix keys and replay guards there)';
  return undefined;
}

/**
 * What an id that names a key other than a job hash breaks, or undefined: a queue key name, a
 * 3-segment id ending in a sub-key name (`a:b:lock` reads as the lock of job `a:b`), or `:` outside
 * BullMQ's 3-segment form (`1:lock`, `de:x`). Readers answer "no such job" for these.
 */
export function keyNameProblem(id: string): string | undefined {
  if (queueKeyNames.includes(id))
    return "an id other than the name of one of the queue's own keys (wait, meta, active, metrics, …)";
  if (!id.includes(":")) return undefined;
  const segments = id.split(":");
  if (segments.length !== 3) return 'an id without ":", or with exactly three ":"-separated segments';
  if (subKeyNames.includes(segments[2] as string))
    return `an id that does not end in a job sub-key name (${subKeyNames.map((n) => `:${n}`).join(", ")})`;
  return undefined;
}

/** The reserved space an id starts in, or undefined. */
export function reservedSpaceOf(id: string): { space: string; owner: string } | undefined {
  return reservedIdSpaces.find(({ space }) => id.startsWith(space));
}

/**
 * What a custom job id breaks, or undefined. BullMQ's rules (not an integer: those are the
 * counter's; `:` only in the 3-segment form; never `0` or `0:…`; at most 1,024 characters), plus:
 * not a key name of the queue (nor a sub-key of one), and not in a reserved id space.
 */
export function jobIdProblem(id: string): string | undefined {
  if (id === "") return "a non-empty string";
  const reserved = reservedSpaceOf(id);
  if (reserved) return `an id outside the reserved id space "${reserved.space}…" (${reserved.owner})`;
  if (/^-?\d+$/.test(id)) return "a custom id that is not an integer (those are for the counter)";
  const keyName = keyNameProblem(id);
  if (keyName) return keyName;
  if (id === "0" || id.startsWith("0:")) return 'an id other than "0" and "0:…"';
  if (id.length > maxJobIdLength) return `at most ${maxJobIdLength} characters`;
  if (loneSurrogate.test(id)) return "well-formed Unicode (no lone surrogate)";
  if (controlCharacter.test(id)) return "an id without control characters (NUL, CR, LF, …)";
  if (invisibleCharacter.test(id)) return `an id with ${invisibleRule}`;
  return undefined;
}

/**
 * What a group id breaks (`opts.group.id`, BullMQ Pro's groups), or undefined: it names the group's
 * key `{P}nq:g:<id>`, so a job id's rules apply, except that integers are fine (tenant numbers) and
 * `:` is not (it would read as a key separator).
 */
export function groupIdProblem(id: string): string | undefined {
  if (id === "") return "a non-empty string";
  if (id.includes(":")) return 'a group id without ":"';
  if (id.length > maxJobIdLength) return `at most ${maxJobIdLength} characters`;
  if (loneSurrogate.test(id)) return "well-formed Unicode (no lone surrogate)";
  if (controlCharacter.test(id)) return "a group id without control characters (NUL, CR, LF, …)";
  if (invisibleCharacter.test(id)) return `a group id with ${invisibleRule}`;
  return undefined;
}

/** What a job name breaks, or undefined: any string of at most 1,000 bytes of UTF-8. */
export function jobNameProblem(name: string): string | undefined {
  const bytes = utf8Length(name);
  return bytes > maxJobNameBytes
    ? `at most ${maxJobNameBytes} bytes of UTF-8 (got ${bytes} bytes)`
    : undefined;
}

/**
 * The queue-name rules as one ECMA-262 pattern (for the OpenAPI document). It cannot count UTF-8
 * bytes or spot lone surrogates: `queueNameProblem` is the authority, the pattern agrees otherwise.
 */
export const queueNamePattern = `^(?!\\.{1,2}$)(?!nq$)(?!nq-req$)[^\\u0000-\\u001F\\u007F-\\u009F${invisibleCharacters}:/*?\\[\\]\\\\{}]+$`;

/** The custom-job-id rules as one ECMA-262 pattern, built from the lists above (length aside). */
export const jobIdPattern = [
  "^",
  `(?!${reservedIdSpaces.map(({ space }) => space).join("|")})`,
  "(?!-?\\d+$)(?!0:)",
  `(?!.*[\\u0000-\\u001F\\u007F-\\u009F${invisibleCharacters}])`,
  `(?!(?:${queueKeyNames.join("|")})$)`,
  `(?![^:]*:[^:]*:(?:${subKeyNames.join("|")})$)`,
  "(?:[^:]+|[^:]*:[^:]*:[^:]*)$",
].join("");
