/**
 * `import "nimbusq/cron";` — puts cron-parser in the bundle and registers it, for bundles that upsert
 * job schedulers with a cron `pattern` or `tz` (see `cron.ts`). The worker and the sweeper need no such
 * line: their schedule timing imports this module. Plain Node needs none either: it loads the parser.
 */
// The parser module alone: the package index also loads a crontab-file reader that requires `fs`.
import { CronExpressionParser } from "cron-parser/dist/CronExpressionParser.js";
import { type CronParser, registerCronParser } from "./cron.ts";

/** cron-parser's `CronExpressionParser`, typed as the part nimbusq calls. */
export const cronParser: CronParser = CronExpressionParser;

registerCronParser(cronParser);

export type { CronParser } from "./cron.ts";
export { CronParserMissingError, registerCronParser } from "./cron.ts";
