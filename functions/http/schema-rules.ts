/**
 * The building blocks of the HTTP API's schemas (zod/mini: read by validation.ts to check requests and
 * by openapi.ts to write `/openapi.json`). Every check carries its rule as a phrase that reads after
 * "<field> must be" ("an integer from 0 to 10"): validation.ts turns a failed check into
 * `400 invalid_request` naming the field and stating that phrase.
 *
 * Name rules are core's (core/redis/names.ts): validation calls core's own functions (which count UTF-8
 * bytes and spot lone surrogates, as no pattern can), and the document shows core's patterns and
 * limits, so a rule changes in one place.
 */
import * as z from "zod/mini";
import {
  jobIdPattern,
  jobIdProblem,
  jobNameProblem,
  maxJobIdLength,
  maxJobNameBytes,
  maxQueueNameBytes,
  queueNamePattern,
  queueNameProblem,
} from "../../core/internal.ts";
import { doc, named } from "./schema-docs.ts";

/** An integer within bounds (JSON bodies). */
export function integer(min: number, max?: number) {
  const rule = max === undefined ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
  const schema = z.int({ error: rule }).check(z.gte(min, { error: rule }));
  return max === undefined ? schema : schema.check(z.lte(max, { error: rule }));
}

export const flag = () => z.boolean({ error: "a boolean" });

/** One of a few strings. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `one of ${values.join(", ")}` });
}

export const text = (rule = "a non-empty string") =>
  z.string({ error: rule }).check(z.minLength(1, { error: rule }));

/**
 * A non-negative integer carried as text (a query parameter): digits only, so `1e3`, `0x10`, ` 5`
 * and `1.5` are refused rather than read as numbers. Documented as the integer it stands for.
 */
export function queryInteger(rule: string, max: number) {
  const digits = doc(z.string({ error: rule }).check(z.regex(/^\d{1,15}$/, { error: rule })), {
    type: "integer",
    minimum: 0,
    maximum: max,
    pattern: undefined,
  });
  return z.pipe(
    digits,
    z.transform((value: string) => Number(value)).check(z.refine((n) => n <= max, { error: rule })),
  );
}

/** A check made by one of core's `…Problem` functions (undefined when the value is fine). */
function byCore(problem: (value: string) => string | undefined) {
  return z.superRefine((value: string, ctx) => {
    const rule = problem(value);
    if (rule !== undefined) ctx.addIssue({ code: "custom", message: rule });
  });
}

const queueNameRules = `at most ${maxQueueNameBytes} bytes of UTF-8; no control characters, ":", "/", glob characters (* ? [ ] \\), "{" or "}"; not ".", "..", "nq" or "nq-req"`;

/** A queue name: it becomes part of every key of the queue (`<prefix>:<name>:…`). */
export const queueName = doc(z.string({ error: "a queue name (a string)" }).check(byCore(queueNameProblem)), {
  minLength: 1,
  maxLength: maxQueueNameBytes,
  pattern: queueNamePattern,
  description: `A queue name: ${queueNameRules} (maxLength bounds characters; the limit is in bytes)`,
  example: "email",
});

/** A custom job id (opts.jobId, or one an Idempotency-Key makes). */
export const jobId = doc(z.string({ error: "a job id (a string)" }).check(byCore(jobIdProblem)), {
  minLength: 1,
  maxLength: maxJobIdLength,
  pattern: jobIdPattern,
  description:
    'A custom job id: not an integer (those are the counter\'s); ":" only as three segments (a:b:c); not a key name of the queue (wait, meta, active, metrics, …) nor ending in a job sub-key name (:lock, :logs, …); not in a reserved id space (dl:, repeat:, metrics:, de:, dn:, nq:, nq-req:); not "0" or "0:…"',
  example: "signup-42",
});

export const jobName = doc(z.string({ error: "a string" }).check(byCore(jobNameProblem)), {
  maxLength: maxJobNameBytes,
  description: `The job's name: any string of at most ${maxJobNameBytes} bytes of UTF-8 (maxLength bounds characters)`,
  example: "welcome-email",
});

/**
 * Any JSON value, as a field the server always sends (`z.unknown()` would be documented as optional):
 * a job's data, progress and return value.
 */
export const jsonValue = named(
  "JsonValue",
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(z.unknown()),
    z.record(z.string(), z.unknown()),
  ]),
  { description: "Any JSON value" },
);
