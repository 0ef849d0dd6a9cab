/**
 * Input checks for job schedulers, before any Redis call (a refused schedule writes nothing), and the
 * shapes BullMQ 6.7.0 stores: the scheduler hash's fields and each iteration's `opts.repeat`.
 */

import type { JobSchedulerTemplate, JobsOptions, RepeatOptions } from "../types.ts";
import { type Checker, checkJobName, checkJobOptions, maxDueTime, serializeData } from "../validate.ts";
import { loadCronParser } from "./cron.ts";

const repeatKeys = ["pattern", "tz", "every", "offset", "limit", "startDate", "endDate", "immediately"];
/** Set by the scheduler for each iteration, or not combinable with one. */
const iterationOwnedOptions = ["jobId", "delay", "deduplication", "parent", "timestamp"] as const;

/** A checked schedule; dates in ms. */
export interface Schedule {
  pattern?: string;
  every?: number;
  tz?: string;
  offset?: number;
  limit?: number;
  startDate?: number;
  endDate?: number;
  immediately: boolean;
}

/** A checked template: the iterations' name, data (JSON text) and options. */
export interface Template {
  name: string;
  dataText: string;
  opts: JobsOptions;
}

/** Text as it sits inside a JSON string: the scripts splice scheduler ids into iteration opts. */
export const jsonEscaped = (text: string): string => JSON.stringify(text).slice(1, -1);

/**
 * Scheduler ids end up in keys and job ids (`repeat:<id>:<millis>`): not empty, and without ":" so
 * iteration ids keep BullMQ's three-segment form.
 */
export function checkSchedulerId(check: Checker, value: unknown, forWriting = true): string {
  const id = check.string("id", value);
  if (forWriting && id.includes(":")) check.fail("id", 'a scheduler id without ":"', id);
  if (id.length > 512) check.fail("id", "at most 512 characters", id);
  return id;
}

function checkDate(check: Checker, field: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms =
    value instanceof Date || typeof value === "string" || typeof value === "number" ? toMillis(value) : NaN;
  if (!Number.isInteger(ms) || ms < 0 || ms > maxDueTime) {
    check.fail(field, "a date (ms since the epoch, a Date or a date string) before 2039", value);
  }
  return ms;
}

/** A date option as ms (BullMQ's `new Date(x).getTime()`); NaN when it is no date. */
export function toMillis(value: Date | string | number): number {
  return new Date(value).getTime();
}

/** Why cron-parser refuses something, on one line. */
function reason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] as string;
}

/**
 * The checked schedule. A `pattern` or `tz` loads the cron parser first (see cron.ts), so an `every`
 * schedule never needs it.
 */
export async function checkRepeatOptions(check: Checker, value: unknown, now: number): Promise<Schedule> {
  const repeat = check.object("repeat", value, repeatKeys) as RepeatOptions;
  const { pattern, every, tz } = repeat;
  if (pattern !== undefined && every !== undefined) {
    check.fail("repeat.every", "left out when repeat.pattern is set (a schedule has one or the other)");
  }
  if (pattern === undefined && every === undefined) {
    check.fail("repeat.pattern", "a cron pattern, unless repeat.every gives an interval");
  }
  if (every !== undefined) check.integer("repeat.every", every, 1, maxDueTime);
  if (tz !== undefined) check.string("repeat.tz", tz);
  if (pattern !== undefined) check.string("repeat.pattern", pattern);
  if (tz !== undefined || pattern !== undefined) {
    const parser = await loadCronParser();
    if (tz !== undefined) {
      try {
        parser.parse("* * * * *", { tz, currentDate: now }).next();
      } catch {
        check.fail("repeat.tz", "an IANA time zone such as Europe/Berlin", tz);
      }
    }
    if (pattern !== undefined) {
      try {
        parser.parse(pattern, { tz, currentDate: now });
      } catch (error) {
        check.fail("repeat.pattern", `a cron pattern cron-parser accepts (${reason(error)})`, pattern);
      }
    }
  }
  if (repeat.offset !== undefined) check.integer("repeat.offset", repeat.offset, 0, maxDueTime);
  if (repeat.limit !== undefined) check.integer("repeat.limit", repeat.limit, 1);
  if (repeat.immediately !== undefined) check.boolean("repeat.immediately", repeat.immediately);
  const startDate = checkDate(check, "repeat.startDate", repeat.startDate);
  const endDate = checkDate(check, "repeat.endDate", repeat.endDate);
  if (repeat.immediately && startDate !== undefined) {
    check.fail("repeat.immediately", "left out when repeat.startDate is set");
  }
  if (endDate !== undefined && startDate !== undefined && endDate <= startDate) {
    check.fail("repeat.endDate", "after repeat.startDate", repeat.endDate);
  }
  if (endDate !== undefined && endDate < now) check.fail("repeat.endDate", "in the future", repeat.endDate);
  const schedule: Schedule = { immediately: repeat.immediately === true };
  if (pattern !== undefined) schedule.pattern = pattern;
  if (every !== undefined) schedule.every = every;
  if (tz !== undefined) schedule.tz = tz;
  if (repeat.offset !== undefined) schedule.offset = repeat.offset;
  if (repeat.limit !== undefined) schedule.limit = repeat.limit;
  if (startDate !== undefined) schedule.startDate = startDate;
  if (endDate !== undefined) schedule.endDate = endDate;
  return schedule;
}

/** The template, merged over the queue's default options (minus what each iteration sets itself). */
export function checkTemplate(
  check: Checker,
  value: unknown,
  id: string,
  defaults: JobsOptions | undefined,
  maxDataBytes: number,
  now: number,
): Template {
  const template = (
    value === undefined ? {} : check.object("template", value, ["name", "data", "opts"])
  ) as JobSchedulerTemplate;
  const own = (template.opts ?? {}) as Record<string, unknown>;
  if (typeof own !== "object" || own === null || Array.isArray(own))
    check.fail("template.opts", "an object", own);
  for (const key of iterationOwnedOptions) {
    if (own[key] !== undefined) check.fail(`template.opts.${key}`, "left out: the scheduler sets it");
  }
  const inherited: Record<string, unknown> = { ...defaults };
  for (const key of iterationOwnedOptions) delete inherited[key];
  const opts = checkJobOptions(check, "template.opts", { ...inherited, ...own }, now);
  const name = template.name ?? id;
  checkJobName(check, "template.name", name);
  const limit = Math.min(maxDataBytes, opts.sizeLimit ?? Number.POSITIVE_INFINITY);
  return { name, dataText: serializeData(check, "template.data", template.data ?? {}, limit), opts };
}

/**
 * The `opts.repeat` of an iteration as BullMQ writes it: the schedule without `immediately`, dates in
 * ms, the offset only for `every` schedules that were given one, and the iteration's number.
 */
export function iterationRepeat(schedule: Schedule, count: number): Record<string, unknown> {
  const { immediately: _, offset, ...rest } = schedule;
  return { ...rest, ...(schedule.every && offset ? { offset } : {}), count };
}
