/**
 * A job handed over to a worker invocation by the add that starts it (lua/handOffJob.lua): leased to
 * the invocation before it exists, and carried in its start request, so the invocation runs it at
 * once — its first Redis call is the job's ack. Shared by the add side (core/adds/handoff.ts) and the
 * worker side (core/worker/pipeline.ts).
 */

import { Checker } from "../validate.ts";

/** What the invocation needs of its handed-over job, as JSON. */
export interface HandedOverJob {
  id: string;
  /** The job's lock value: the invocation's first call acks with it. */
  token: string;
  /** The id the invocation was registered under as a running worker (it removes it when it ends). */
  invocation: string;
  /** When the lock was set (the adder's clock, ms) and for how long (ms). */
  lockedAt: number;
  leaseMs: number;
  /** The job's hash as the add wrote it, flat (name, value, …), as HGETALL answers. */
  fields: string[];
}

/**
 * Lambda's asynchronous invocations carry at most 1 MB (1,048,576 bytes) of payload; a handoff keeps
 * a margin for the request's other fields and JSON escaping.
 */
export const maxHandoffBytes = 900_000;

/** The request's bytes as JSON (UTF-8), to compare with `maxHandoffBytes`. */
export function handoffBytes(job: HandedOverJob): number {
  return new TextEncoder().encode(JSON.stringify(job)).length;
}

/** Throws a ValidationError naming the field when `given` is no HandedOverJob (a malformed request). */
export function checkHandedOver(given: unknown, context: string): HandedOverJob {
  const check = new Checker(context);
  const job = check.object("event.handoff", given, [
    "id",
    "token",
    "invocation",
    "lockedAt",
    "leaseMs",
    "fields",
  ]);
  for (const field of ["id", "token", "invocation"] as const)
    if (typeof job[field] !== "string" || job[field] === "")
      check.fail(`event.handoff.${field}`, "a non-empty string", job[field]);
  check.integer("event.handoff.lockedAt", job.lockedAt, 0);
  check.integer("event.handoff.leaseMs", job.leaseMs, 1);
  const fields = job.fields;
  if (!Array.isArray(fields) || fields.length % 2 !== 0 || !fields.every((f) => typeof f === "string"))
    check.fail("event.handoff.fields", "an array of strings, name then value", fields);
  return job as unknown as HandedOverJob;
}
