/**
 * Job schedulers (BullMQ's upsertJobScheduler: cron with time zone, every): their API is on Queue; what
 * this room offers on its own is the cron parser's registration, for bundles that compute schedule
 * times (`nimbusq/cron` registers it as a side effect, see cron-register.ts).
 */
export { type CronParser, CronParserMissingError, registerCronParser } from "./cron.ts";
