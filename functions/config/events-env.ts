/**
 * `NIMBUSQ_EVENTS`: the events level of every queue a deployment serves — `all` (BullMQ's events,
 * the default), `final` (completed, failed, retries-exhausted) or `none`. The HTTP API, the producer
 * triggers and the workers all read it, so a queue's producers and workers agree (see
 * WorkerOptions.events for what each level leaves out).
 */
import { type EventsLevel, ValidationError } from "../../core/index.ts";

export const eventsVariable = "NIMBUSQ_EVENTS";
const levels: readonly EventsLevel[] = ["all", "final", "none"];

/** The level from the environment, or undefined (all) when unset. */
export function eventsFromEnv(
  env: Record<string, string | undefined> = process.env,
): EventsLevel | undefined {
  const value = env[eventsVariable]?.trim();
  if (value === undefined || value === "") return undefined;
  if (!(levels as readonly string[]).includes(value)) {
    throw new ValidationError(
      eventsVariable,
      `one of ${levels.join(", ")} (got "${value}")`,
      "the environment",
    );
  }
  return value as EventsLevel;
}
