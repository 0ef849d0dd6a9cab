/**
 * The cron parser, kept out of bundles that never read a cron pattern. cron-parser and the luxon it
 * brings weigh about 95 KB minified, and `Queue` cannot shed `upsertJobScheduler` (a bundler keeps
 * every method of a class it keeps), so the Queue side never imports cron-parser: it asks this module,
 * which has the parser registered (`cron-register.ts`, the package's `nimbusq/cron`, which the worker
 * and sweeper reach through their schedule timing) or loads it on first need with an import that
 * bundlers leave alone, which works wherever cron-parser can be resolved (plain Node).
 */
import { QueueError } from "../errors.ts";

/** The part of cron-parser's `CronExpressionParser` nimbusq calls (dates in ms or `Date`s). */
export interface CronParser {
  parse(
    expression: string,
    options?: { tz?: string; startDate?: number; endDate?: number; currentDate?: Date | number },
  ): { next(): { getTime(): number } };
}

/** A cron pattern had to be read where no cron parser was registered or could be loaded. */
export class CronParserMissingError extends QueueError {
  override name = "CronParserMissingError" as const;
}

/** The parser module alone: the package index also loads a crontab-file reader that requires `fs`. */
const parserModule = "cron-parser/dist/CronExpressionParser.js";

let registered: CronParser | undefined;
let loading: Promise<CronParser> | undefined;

/** Makes `parser` the one cron patterns go through (what importing `nimbusq/cron` does). */
export function registerCronParser(parser: CronParser): void {
  registered = parser;
}

// A specifier that is not a literal: bundlers neither follow nor bundle it (the comments say so to
// those that warn about it), so the parser only lands in bundles that register it.
const importModule = (specifier: string): Promise<Record<string, unknown>> =>
  import(/* webpackIgnore: true */ /* @vite-ignore */ specifier);

function parserOf(namespace: Record<string, unknown>): CronParser | undefined {
  // cron-parser is CommonJS: Node gives its exports as named exports and as `default`.
  const fromDefault = (namespace.default as Record<string, unknown> | undefined)?.CronExpressionParser;
  const parser = namespace.CronExpressionParser ?? fromDefault;
  return typeof (parser as CronParser | undefined)?.parse === "function" ? (parser as CronParser) : undefined;
}

const missing = (cause?: unknown) =>
  new CronParserMissingError(
    'a cron pattern needs cron-parser, which this bundle does not carry: add `import "nimbusq/cron";` to ' +
      "the entry of any bundle that upserts job schedulers with a pattern or tz (plain adds never need it)",
    cause === undefined ? undefined : { cause },
  );

/** The registered parser, else cron-parser loaded once; a CronParserMissingError when neither works. */
export function loadCronParser(): Promise<CronParser> {
  if (registered) return Promise.resolve(registered);
  loading ??= importModule(parserModule).then(
    (namespace) => {
      const parser = parserOf(namespace);
      if (!parser) throw missing(new Error(`${parserModule} has no CronExpressionParser`));
      registered ??= parser;
      return registered;
    },
    (error: unknown) => {
      loading = undefined;
      throw missing(error);
    },
  );
  return loading;
}

/** The parser `loadCronParser` settled on; for synchronous code that runs after it. */
export function loadedCronParser(): CronParser {
  if (!registered) throw missing();
  return registered;
}

/** The parts of a schedule the timing decisions read; dates in ms. */
export interface ScheduleTiming {
  pattern?: string;
  every?: number;
  tz?: string;
  startDate?: number;
  endDate?: number;
  limit?: number;
}

/**
 * The pattern's first occurrence strictly after `from` (or after `startDate` when that is later), in
 * `tz`; undefined when it falls after `endDate`. Throws when cron-parser refuses the pattern or zone.
 * BullMQ 6.7.0 calls cron-parser v5 (the same version) with the same arguments, so both libraries
 * land a schedule on the same millis.
 */
export function cronNext(
  pattern: string,
  timing: ScheduleTiming,
  from: number,
  parser: CronParser = loadedCronParser(),
): number | undefined {
  const { tz, startDate, endDate } = timing;
  const currentDate = new Date(startDate !== undefined && startDate > from ? startDate : from);
  const expression = parser.parse(pattern, { tz, startDate, endDate, currentDate });
  try {
    return expression.next().getTime();
  } catch {
    // cron-parser throws once the next occurrence is past endDate: the schedule is over.
    return undefined;
  }
}
