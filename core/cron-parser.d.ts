/**
 * Types for importing cron-parser's parser module on its own: the package's index also loads its
 * crontab-file reader, which requires `fs`, and bundles for edge runtimes and Lambda should not.
 */
declare module "cron-parser/dist/CronExpressionParser.js" {
  export { CronExpressionParser } from "cron-parser";
}
