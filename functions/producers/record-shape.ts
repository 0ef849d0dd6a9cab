/**
 * Checks that a trigger's event and each of its records carry the fields the trigger reads, so a
 * malformed record fails alone, with its index and field named, instead of a TypeError that fails the
 * whole event. The errors name fields and rules only, never a record's contents.
 */
import { ValidationError } from "../../core/index.ts";

const rules = {
  object: ["an object", (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v)],
  string: ["a string", (v: unknown) => typeof v === "string"],
  id: ["a non-empty string", (v: unknown) => typeof v === "string" && v !== ""],
  "string?": ["a string when present", (v: unknown) => v === undefined || typeof v === "string"],
  "object?": [
    "an object when present",
    (v: unknown) => v === undefined || (typeof v === "object" && v !== null && !Array.isArray(v)),
  ],
  defined: ["present", (v: unknown) => v !== undefined],
} as const;

/** A dotted path inside the record (`s3.object.key`) and what it must be. */
export type Check = readonly [path: string, rule: keyof typeof rules];

/** The value at a dotted path, or undefined when any step of it is missing or not an object. */
export function valueAt(value: unknown, path: string): unknown {
  let at = value;
  for (const part of path.split(".")) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** The string at a path when it is a non-empty one (an id usable in answers and logs). */
export function idAt(value: unknown, path: string): string | undefined {
  const at = valueAt(value, path);
  return typeof at === "string" && at !== "" ? at : undefined;
}

/** The first check `value` fails, as a ValidationError on `<where>.<path>`; undefined when all pass. */
export function shapeProblem(
  source: string,
  where: string,
  value: unknown,
  checks: readonly Check[],
): ValidationError | undefined {
  if (!rules.object[1](value)) return new ValidationError(where, rules.object[0], source);
  for (const [path, rule] of checks) {
    const [description, test] = rules[rule];
    if (!test(valueAt(value, path))) return new ValidationError(`${where}.${path}`, description, source);
  }
  return undefined;
}

/** The event's `Records`, or a ValidationError naming `event.Records` when the event has none. */
export function eventRecords<R>(source: string, event: unknown): R[] {
  const records = valueAt(event, "Records");
  if (!Array.isArray(records)) throw new ValidationError("event.Records", "an array of records", source);
  return records as R[];
}
