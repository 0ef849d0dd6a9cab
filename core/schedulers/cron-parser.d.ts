/**
 * Types for importing cron-parser's parser module on its own (`cron-register.ts`): the package's index
 * also loads its crontab-file reader, which requires `fs`, and bundles for edge runtimes and Lambda
 * should not. Only the sources see this; the package's own types never name cron-parser.
 */
declare module "cron-parser/dist/CronExpressionParser.js" {
  export { CronExpressionParser } from "cron-parser";
}
