/**
 * What every route needs from a request: the queue its path names (checked against the name rules
 * and the allow-list), the job id its path names, the job itself, and the worker kick.
 */
import type { Context } from "hono";
import { type Job, type JobState, Queue, ValidationError } from "../../core/index.ts";
import { checkQueueName, keyNameProblem } from "../../core/internal.ts";
import type { AppEnv } from "./app-env.ts";
import { errorCodes, HttpError } from "./http-errors.ts";
import type { HttpSettings, KickHint } from "./options.ts";

/**
 * Ids that name a key other than a job hash (`{P}meta`, `{P}wait`, `{P}1:lock`, `{P}de:<id>`…), by
 * core's rule: reading them as a job would misread another structure. Ids in reserved spaces (dead
 * letters `dl:…`, scheduler iterations `repeat:…:…`) are jobs, and stay readable.
 */
export function isReservedJobId(id: string): boolean {
  return keyNameProblem(id) !== undefined;
}

export interface QueueAccess {
  settings: HttpSettings;
  /** The queue named by the path: 400 for a name BullMQ refuses, 404 for one the allow-list lacks. */
  queue(c: Context<AppEnv>): Queue;
  /** The job id named by the path. */
  jobId(c: Context<AppEnv>): string;
  /** The job, or a 404. */
  findJob(queue: Queue, id: string): Promise<Job>;
  /** The job with its state, read together so they agree, or a 404. */
  findJobWithState(queue: Queue, id: string): Promise<{ job: Job; state: JobState }>;
  /** Starts the queue's worker when a kick is configured; a failure is logged, never answered. */
  kick(queue: string, hint?: KickHint): Promise<void>;
}

/** Reads a job through `read`, answering 404 for ids that name no job hash or no job. */
async function readJob<T>(
  queue: Queue,
  id: string,
  read: (queue: Queue) => Promise<T | undefined>,
): Promise<T> {
  if (id === "" || isReservedJobId(id)) throw jobNotFound(queue.name, id);
  let found: T | undefined;
  try {
    found = await read(queue);
  } catch (error) {
    // A three-segment id may still name a non-hash key (`{P}metrics:completed:data`).
    if (!(error instanceof Error && /WRONGTYPE/.test(error.message))) throw error;
  }
  if (!found) throw jobNotFound(queue.name, id);
  return found;
}

function jobNotFound(queue: string, id: string): HttpError {
  return new HttpError(404, errorCodes.jobNotFound, `no job "${id}" in queue "${queue}"`);
}

export function queueAccess(settings: HttpSettings): QueueAccess {
  return {
    settings,
    queue(c) {
      const name = c.req.param("queue") ?? "";
      try {
        checkQueueName(name, "queue in the path");
      } catch (error) {
        if (error instanceof ValidationError)
          throw new HttpError(400, errorCodes.invalidRequest, `queue must be ${error.rule}`, "queue");
        throw error;
      }
      if (settings.queues && !settings.queues.has(name))
        throw new HttpError(404, errorCodes.unknownQueue, `unknown queue "${name}"`);
      // A Queue is a few strings: made per request rather than cached, so that a client naming many
      // queues cannot grow the function's memory.
      const defaultJobOptions = settings.queueDefaultJobOptions.get(name) ?? settings.defaultJobOptions;
      const target = settings.kick?.handoffTarget?.(name);
      // As a kick's, a failed start is logged, never answered: the job waits for the sweeper.
      const handoff = target && {
        ...target,
        onStartError: (error: unknown) =>
          settings.log(`nimbusq http: starting the worker of queue "${name}" failed`, error),
      };
      return new Queue(name, {
        ...(handoff ? { handoff } : {}),
        redis: settings.redis,
        prefix: settings.prefix,
        retry: settings.retry,
        ...(defaultJobOptions ? { defaultJobOptions } : {}),
        ...(settings.events ? { events: settings.events } : {}),
      });
    },
    jobId(c) {
      return c.req.param("id") ?? "";
    },
    async findJob(queue, id) {
      return (await readJob(queue, id, (q) => q.getJob(id))) as Job;
    },
    async findJobWithState(queue, id) {
      return (await readJob(queue, id, (q) => q.getJobWithState(id))) as { job: Job; state: JobState };
    },
    async kick(queue, hint) {
      if (!settings.kick) return;
      try {
        await settings.kick(queue, hint);
      } catch (error) {
        settings.log(`nimbusq http: kicking the worker of queue "${queue}" failed`, error);
      }
    },
  };
}
