/**
 * The sweeper's settings and ports, checked when it is created: a wrong type answers a
 * ValidationError naming the field at cold start, not a TypeError in the first pass.
 */
import { Checker, checkPrefix, checkQueueName } from "../validate.ts";

const queueKeys = [
  "name",
  "prefix",
  "workerFunction",
  "batchSize",
  "maxWorkers",
  "deadLetterQueue",
  "watch",
] as const;
const counts = [
  "tickMs",
  "marginMs",
  "stalledInterval",
  "maxStalledCount",
  "minPassGapMs",
  "metricsEveryPasses",
];

/** Checks what createSweeper is given (other keys are left alone: an adapter passes its own options too). */
export function checkSweeperSettings(settings: unknown, ports: unknown): void {
  const check = new Checker("createSweeper");
  if (typeof settings !== "object" || settings === null || Array.isArray(settings))
    check.fail("settings", "an object", settings);
  const given = settings as Record<string, unknown>;
  if (!Array.isArray(given.queues) || given.queues.length === 0)
    check.fail(
      "queues",
      "a non-empty array of queue names or { name, workerFunction?, batchSize?, … }",
      given.queues,
    );
  for (const [index, queue] of (given.queues as unknown[]).entries()) {
    const field = `queues[${index}]`;
    if (typeof queue === "string") {
      checkQueueName(queue, "createSweeper", field);
      continue;
    }
    const q = check.object(field, queue, queueKeys);
    checkQueueName(q.name, "createSweeper", `${field}.name`);
    if (q.prefix !== undefined) checkPrefix(q.prefix, `createSweeper: ${field}.prefix`);
    if (q.workerFunction !== undefined) check.string(`${field}.workerFunction`, q.workerFunction);
    if (q.batchSize !== undefined) check.integer(`${field}.batchSize`, q.batchSize, 1);
    if (q.maxWorkers !== undefined) check.integer(`${field}.maxWorkers`, q.maxWorkers, 0);
    if (q.watch !== undefined && q.watch !== "index" && q.watch !== "always")
      check.fail(`${field}.watch`, '"index" or "always"', q.watch);
    if (q.deadLetterQueue !== undefined)
      checkQueueName(q.deadLetterQueue, "createSweeper", `${field}.deadLetterQueue`);
  }
  if (given.prefix !== undefined) checkPrefix(given.prefix, "createSweeper");
  if (given.mode !== undefined && given.mode !== "loop" && given.mode !== "once")
    check.fail("mode", '"loop" or "once"', given.mode);
  for (const field of counts) if (given[field] !== undefined) check.integer(field, given[field], 0);
  if (given.releaseLock !== undefined) check.boolean("releaseLock", given.releaseLock);
  for (const field of ["clock", "sleep"])
    if (given[field] !== undefined && typeof given[field] !== "function")
      check.fail(field, "a function", given[field]);
  const port = check.object("ports", ports, [
    "connect",
    "startWorkers",
    "publish",
    "reportMetrics",
    "failed",
  ]);
  for (const field of ["connect", "startWorkers"])
    if (typeof port[field] !== "function") check.fail(`ports.${field}`, "a function", port[field]);
  for (const field of ["publish", "reportMetrics", "failed"])
    if (port[field] !== undefined && typeof port[field] !== "function")
      check.fail(`ports.${field}`, "a function", port[field]);
}
