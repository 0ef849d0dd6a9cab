/**
 * The add events of a committed staged add (core/adds/staged-add.ts): `added` and `waiting`, `delayed` or
 * `waiting-children` for each created job, `duplicated` for each duplicate, in job order, as addJobs
 * writes them. 10,000 jobs' events (20,000 XADDs) do not fit the 20 ms one script call may take, so
 * they follow the commit in calls of at most 1,000 jobs, each with its own replay guard. A listener may
 * therefore see a job's `active` before its `added`. The jobs are added whatever happens here: a call
 * that still fails after the client's retries leaves those events out rather than fail an add that
 * is done (BullMQ's own stream, capped at ~10,000 entries, keeps only the last of a 10,000-job add's).
 */

import { decodePublishAddEvents, publishAddEvents as publishScript } from "../redis/generated/scripts.ts";
import { queueKeys } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";
import { queueTable } from "./add-calls.ts";
import type { AddOutcome, NewJob, WriteSettings } from "./add-types.ts";

const maxJobsPerCall = 1000;

export async function publishAddEvents(
  port: RedisPort,
  jobs: NewJob[],
  outcomes: AddOutcome[],
  settings: WriteSettings,
  guardOf: (step: number) => string,
): Promise<void> {
  if (settings.events !== "all") return;
  const table = queueTable(jobs);
  const entries = [];
  for (const [index, job] of jobs.entries()) {
    const { id, outcome } = outcomes[index] as AddOutcome;
    if (outcome === "deduplicated") continue;
    entries.push({
      queue: table.indexOf(job),
      id,
      outcome,
      name: job.name,
      placement: job.placement,
      due: job.placement === "delayed" ? job.timestamp + (job.opts.delay ?? 0) : 0,
    });
  }
  const queues = table.queues.map((q) => ({ events: queueKeys(q.prefix, q.queueName).events }));
  for (let from = 0, step = 1; from < entries.length; from += maxJobsPerCall, step += 1) {
    try {
      decodePublishAddEvents(
        await runScript(
          port,
          publishScript,
          { replayGuard: guardOf(step), queues },
          {
            guardTtl: settings.guardTtlMs,
            maxLenEvents: settings.maxLenEvents,
            jobs: entries.slice(from, from + maxJobsPerCall),
          },
        ),
      );
    } catch {
      // The jobs are committed; only these events are lost (see above).
    }
  }
}
