/**
 * `NIMBUSQ_METRICS_EVERY`: the sweeper emits its queue metrics every this many passes (default 5, 0
 * never; see SweeperSettings.metricsEveryPasses for what a report costs). Read when the sweeper
 * handler is made, so a bad value fails the cold start, naming the variable.
 */
import { ValidationError } from "../../core/index.ts";

export const metricsEveryVariable = "NIMBUSQ_METRICS_EVERY";

export function metricsEveryFromEnv(env: Record<string, string | undefined> = process.env): number {
  const text = env[metricsEveryVariable]?.trim();
  if (text === undefined || text === "") return 5;
  if (!/^\d+$/.test(text)) {
    throw new ValidationError(metricsEveryVariable, "a whole number of passes (0: no metrics)", "sweeper");
  }
  return Number(text);
}
