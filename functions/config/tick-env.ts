/**
 * `NIMBUSQ_TICK_MS`: the sweeper's tick (ms, EventBridge's schedule; default 60 000), one setting for
 * every function. The sweeper plans its passes by it; the HTTP API and the producer triggers start a
 * worker for a delayed job due within it (later than that, the tick promotes it on time anyway).
 */
import { Checker } from "../../core/internal.ts";
import type { Env } from "./workers-env.ts";

export const tickVariable = "NIMBUSQ_TICK_MS";

/** The tick from the environment; undefined when unset or blank. */
export function tickFromEnv(env: Env = process.env, context = "tickFromEnv"): number | undefined {
  const text = env[tickVariable]?.trim();
  if (text === undefined || text === "") return undefined;
  const check = new Checker(context);
  if (!/^\d+$/.test(text)) check.fail(tickVariable, "a whole number of milliseconds, at least 1000", text);
  return check.integer(tickVariable, Number(text), 1000);
}
