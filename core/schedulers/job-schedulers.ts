/**
 * Job schedulers on the producer side (BullMQ 6.7.0's `upsertJobScheduler` and its getters), in
 * BullMQ's layout: the `{P}repeat` ZSET, the `{P}repeat:<id>` hash and one pending iteration job
 * `repeat:<id>:<millis>`. Workers make each next iteration when they take the current one
 * (`scheduler-iterations.ts`); the sweeper brings back one that went missing.
 */

import { writeSettings } from "../adds/add-jobs.ts";
import type { QueueOptions } from "../adds/queue-options.ts";
import { errorForCode } from "../errors.ts";
import { Job } from "../job/job.ts";
import { decodeOptions, decodeScheduler, hashFromFlat, shortOptions } from "../redis/codec.ts";
import {
  decodeGetJobSchedulers,
  decodeRemoveJobScheduler,
  decodeUpsertJobScheduler,
  getJobSchedulers,
  removeJobScheduler,
  upsertJobScheduler,
} from "../redis/generated/scripts.ts";
import { checkJobTargets } from "../redis/hash-slot.ts";
import { attentionKey, queueKeyPrefix, queueKeys } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import type { JobSchedulerJson, JobsOptions, RepeatOptions } from "../types.ts";
import { Checker, defaultMaxDataBytes } from "../validate.ts";
// Not schedule-time.ts: that carries the cron parser, which the Queue side loads only when needed.
import { cronNext } from "./cron.ts";
import {
  checkRepeatOptions,
  checkSchedulerId,
  checkTemplate,
  iterationRepeat,
  jsonEscaped,
} from "./scheduler-options.ts";

/** What the scheduler calls need from their Queue: where it lives and its options. */
export interface SchedulerHost {
  context: QueueContext;
  options: Pick<QueueOptions, "defaultJobOptions" | "maxDataBytes" | "streams" | "replayGuardTtlMs">;
}

/** Creates or updates a scheduler; undefined when its pattern has no run left before `endDate`. */
export async function upsertScheduler<TData>(
  host: SchedulerHost,
  id: string,
  repeat: RepeatOptions,
  template: unknown,
): Promise<Job<TData> | undefined> {
  const { port, prefix, queueName, clock } = host.context;
  const now = clock();
  const check = new Checker(`Queue "${queueName}": upsertJobScheduler`);
  const schedulerId = checkSchedulerId(check, id);
  const schedule = await checkRepeatOptions(check, repeat, now);
  const { defaultJobOptions, maxDataBytes = defaultMaxDataBytes } = host.options;
  const { maxLenEvents } = writeSettings(host.options, now);
  const { name, dataText, opts } = checkTemplate(
    check,
    template,
    schedulerId,
    defaultJobOptions,
    maxDataBytes,
    now,
  );
  // Its iterations' dead letter and parent, as an add's (cluster slot, shard map database).
  checkJobTargets(check, "template.", host.context, opts as JobsOptions);
  let nextMillis: number | undefined;
  if (schedule.pattern !== undefined) {
    const next = schedule.immediately ? now : cronNext(schedule.pattern, schedule, now);
    if (next === undefined) return undefined;
    nextMillis = Math.max(next, now);
  }
  // BullMQ's first iteration: the template's options as given (no `attempts` added), then the
  // scheduler's own; the script appends jobId and delay once it knows the millis.
  const stored = shortOptions(opts as Record<string, unknown>);
  const iterationOpts = {
    ...stored,
    repeat: iterationRepeat(schedule, 1),
    timestamp: now,
    ...(nextMillis !== undefined ? { prevMillis: nextMillis } : {}),
    repeatJobKey: schedulerId,
  };
  const templateOpts = JSON.stringify(stored);
  const raw = await runScript(port, upsertJobScheduler, queueKeysFor(host), {
    prefix: queueKeyPrefix(prefix, queueName),
    schedulerId,
    idJson: jsonEscaped(schedulerId),
    now,
    nextMillis: nextMillis ?? "",
    every: schedule.every ?? "",
    offset: schedule.every && schedule.offset ? schedule.offset : "",
    startDate: schedule.startDate ?? "",
    endDate: schedule.endDate ?? "",
    tz: schedule.tz ?? "",
    pattern: schedule.pattern ?? "",
    limit: schedule.limit ?? "",
    name,
    data: dataText === "{}" ? "" : dataText,
    templateOpts: templateOpts === "{}" ? "" : templateOpts,
    optsHead: JSON.stringify(iterationOpts).slice(0, -1),
    priority: opts.priority ?? 0,
    lifo: opts.lifo ? "1" : "",
    group: opts.group?.id ?? "",
    maxLenEvents,
  });
  const reply = decodeUpsertJobScheduler(raw);
  if (reply.form === "refused") {
    throw errorForCode(
      reply.code,
      "upsertJobScheduler",
      `scheduler "${schedulerId}" of queue "${queueName}"`,
    );
  }
  const { jobId, delay } = reply;
  return new Job<TData>(host.context, jobId, {
    name,
    data: JSON.parse(dataText),
    opts: decodeOptions(JSON.stringify({ ...iterationOpts, jobId, delay })),
    timestamp: now,
    delay,
    priority: opts.priority ?? 0,
    repeatJobKey: schedulerId,
  });
}

function queueKeysFor(host: SchedulerHost) {
  const keys = queueKeys(host.context.prefix, host.context.queueName);
  return { ...keys, schedulers: keys.repeat, attention: attentionKey(host.context.prefix) };
}

/** One scheduler, as BullMQ's `getJobScheduler`; undefined when there is none. */
export async function getScheduler<TData>(
  host: SchedulerHost,
  id: string,
): Promise<JobSchedulerJson<TData> | undefined> {
  const { port, queueName } = host.context;
  const check = new Checker(`Queue "${queueName}": getJobScheduler`);
  const schedulerId = checkSchedulerId(check, id, false);
  const reply = decodeGetJobSchedulers(
    await runScript(
      port,
      getJobSchedulers,
      { schedulers: queueKeysFor(host).schedulers },
      { mode: "one", schedulerId, start: 0, stop: 0, ascending: "" },
    ),
    ["none", "one"],
  );
  if (reply.form === "none") return undefined;
  return decodeScheduler(schedulerId, hashFromFlat(reply.fields), reply.next) as
    | JobSchedulerJson<TData>
    | undefined;
}

/**
 * Schedulers by next run (latest first unless `asc`), `start`/`end` indexing that order, as BullMQ's
 * `getJobSchedulers`. A ZSET entry whose hash is gone is left out (BullMQ also deletes it; reads here
 * never write).
 */
export async function listSchedulers<TData>(
  host: SchedulerHost,
  start: number,
  end: number,
  asc: boolean,
): Promise<JobSchedulerJson<TData>[]> {
  const { port, queueName } = host.context;
  const check = new Checker(`Queue "${queueName}": getJobSchedulers`);
  check.integer("start", start, 0);
  check.integer("end", end, -1);
  const { schedulers } = decodeGetJobSchedulers(
    await runScript(
      port,
      getJobSchedulers,
      { schedulers: queueKeysFor(host).schedulers },
      { mode: "range", schedulerId: "", start, stop: end, ascending: asc ? "1" : "" },
    ),
    ["range"],
  );
  const out: JobSchedulerJson<TData>[] = [];
  for (const { id, next, fields } of schedulers) {
    const scheduler = decodeScheduler(id, hashFromFlat(fields), next);
    if (scheduler) out.push(scheduler as JobSchedulerJson<TData>);
  }
  return out;
}

export async function countSchedulers(host: SchedulerHost): Promise<number> {
  const { count } = decodeGetJobSchedulers(
    await runScript(
      host.context.port,
      getJobSchedulers,
      { schedulers: queueKeysFor(host).schedulers },
      { mode: "count", schedulerId: "", start: 0, stop: 0, ascending: "" },
    ),
    ["count"],
  );
  return count;
}

/** Removes a scheduler and its pending iteration if still delayed; true when there was one. */
export async function removeScheduler(host: SchedulerHost, id: string): Promise<boolean> {
  const { port, prefix, queueName } = host.context;
  const schedulerId = checkSchedulerId(new Checker(`Queue "${queueName}": removeJobScheduler`), id, false);
  const keys = queueKeysFor(host);
  const { removed } = decodeRemoveJobScheduler(
    await runScript(
      port,
      removeJobScheduler,
      { schedulers: keys.schedulers, delayed: keys.delayed, events: keys.events },
      { prefix: queueKeyPrefix(prefix, queueName), schedulerId },
    ),
  );
  return removed === 1;
}
