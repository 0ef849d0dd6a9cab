/**
 * `NIMBUSQ_PREFIX`: the key prefix every queue of a deployment lives under (`bull` when unset, as in
 * BullMQ). Every function reads it here, so the HTTP API, the producers, the workers and the sweeper
 * agree on it, and a bad value fails the cold start naming the variable rather than sending jobs to
 * keys no worker reads.
 */
import { ValidationError } from "../../core/index.ts";

export const prefixVariable = "NIMBUSQ_PREFIX";

// A control character is never meant (a value pasted with a stray CR or tab), and would end up in
// every key name, where BullMQ's tools and Bull Board would show it as garbage.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const controlCharacter = /[\u0000-\u001f\u007f]/;

/**
 * The prefix from the environment, trimmed, or undefined (core's default, `bull`) when unset or blank.
 *
 * @example
 * const prefix = prefixFromEnv();
 * export const handler = workerHandler({ queue: "email", processor, ...(prefix ? { prefix } : {}) });
 */
export function prefixFromEnv(
  env: Record<string, string | undefined> = process.env,
  context = "the environment",
): string | undefined {
  const value = env[prefixVariable]?.trim();
  if (value === undefined || value === "") return undefined;
  if (controlCharacter.test(value)) {
    throw new ValidationError(prefixVariable, "a key prefix without control characters", context);
  }
  return value;
}
