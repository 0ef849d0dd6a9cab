/**
 * When job scheduler iterations run, decided as BullMQ 6.7.0 decides it, so that a schedule continued by
 * nimbusq and BullMQ workers in turn lands on the same millis: cron patterns go through cron-parser v5
 * (BullMQ's own dependency, same version) with the same arguments, in the schedule's IANA time zone.
 * `every` schedules are timed in Lua, where the stored offset and previous run are read atomically.
 * Pure: every function takes the time it works from.
 *
 * The worker and the sweeper time iterations here, so this module carries the parser itself (and
 * registers it for the Queue side of the same bundle); the Queue side reaches cron through `cron.ts`.
 */
import * as cron from "./cron.ts";
import { cronParser } from "./cron-register.ts";

export type { ScheduleTiming } from "./cron.ts";

/**
 * The pattern's first occurrence strictly after `from` (or after `startDate` when that is later), in
 * `tz`; undefined when it falls after `endDate`. Throws when cron-parser refuses the pattern or zone.
 */
export function cronNext(pattern: string, timing: cron.ScheduleTiming, from: number): number | undefined {
  return cron.cronNext(pattern, timing, from, cronParser);
}

/** What the current iteration's `opts.repeat` says about its schedule (BullMQ's stored form). */
export interface IterationRepeat extends cron.ScheduleTiming {
  /** This iteration's number, 1 for the first. */
  count?: number;
}

/** The next iteration to make: its number and, for a cron pattern, its time (`every` is timed in Lua). */
export interface NextIteration {
  count: number;
  millis?: number;
}

/**
 * What BullMQ's worker decides when it takes an iteration: no next one past `limit` or once `endDate`
 * has passed; a cron pattern's next run is the first occurrence after the later of now and this
 * iteration's planned time (`prevMillis`), so a late or retried iteration never makes a run twice.
 */
export function planNextIteration(
  repeat: IterationRepeat,
  prevMillis: number | undefined,
  now: number,
): NextIteration | undefined {
  const count = (repeat.count ?? 0) + 1;
  if (repeat.limit !== undefined && count > repeat.limit) return undefined;
  if (repeat.endDate && now > repeat.endDate) return undefined;
  if (!repeat.pattern) return { count };
  const from = Math.max(now, prevMillis ?? 0);
  const next = cronNext(repeat.pattern, repeat, from);
  return next === undefined ? undefined : { count, millis: Math.max(next, from) };
}

/**
 * Whether a scheduler whose current iteration (planned at `millis`, number `iterationCount`) has gone
 * missing should get it back. Not when that iteration could have been the last one — it may have run
 * and been removed on completion: at the limit, past `endDate`, or when the pattern has no occurrence
 * left before `endDate`. Otherwise a worker that had taken it would have made the next one already.
 */
export function shouldRestoreIteration(
  timing: cron.ScheduleTiming & { iterationCount: number },
  millis: number,
  now: number,
): boolean {
  if (timing.limit !== undefined && timing.iterationCount >= timing.limit) return false;
  if (timing.endDate !== undefined && now > timing.endDate) return false;
  if (timing.pattern === undefined || timing.endDate === undefined) return true;
  try {
    return cronNext(timing.pattern, timing, Math.max(now, millis)) !== undefined;
  } catch {
    return false;
  }
}
