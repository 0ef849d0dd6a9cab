/**
 * `nimbusq jobs <queue> [state]`: a page of jobs, one line each — never their data (that is what
 * `nimbusq job` is for).
 */
import { Job, type JobState, type JobType } from "../../core/index.ts";
import { type Command, integerFlag, type Output, oneOf } from "../command.ts";
import { cell, table, time, truncate } from "../table.ts";

const jobTypes: readonly JobType[] = [
  "waiting",
  "wait",
  "prioritized",
  "delayed",
  "active",
  "waiting-children",
  "completed",
  "failed",
  "paused",
];

/** Characters of failedReason a table shows (`--json` carries it whole). */
const reasonWidth = 60;

export const jobs: Command = {
  name: "jobs",
  usage: "jobs <queue> [state] [--start N] [--end N]",
  summary: "a page of jobs: id, name, state, times, attempts, failed reason",
  help: `Lists jobs without their data, newest first. With no state, every state BullMQ's getJobs
lists by default (all but the legacy paused list).

States: ${jobTypes.join(", ")}
Options:
  --start N  first index in each state (default 0)
  --end N    last index in each state (default 19; -1 for all)

Cost: one short script call per page of up to 400 jobs, one more to read states when none is given.`,
  options: { start: { type: "string" }, end: { type: "string" } },
  positionals: { min: 1, max: 2 },
  async run(context, [name, stateArg], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const state = stateArg === undefined ? undefined : oneOf("state", stateArg, jobTypes);
    const start = integerFlag(flags, "start", 0);
    const end = integerFlag(flags, "end", 19, -1);
    const list = await queue.getJobs(state ?? [], start, end);
    const states: JobState[] =
      state === undefined ? await Job.getStates(list) : list.map(() => stateName(state));
    const rows = list.map((job, i) => ({
      id: job.id,
      name: job.name,
      state: states[i] ?? "unknown",
      timestamp: job.timestamp,
      processedOn: job.processedOn ?? null,
      finishedOn: job.finishedOn ?? null,
      attemptsMade: job.attemptsMade,
      // BullMQ's `attempts` counts runs; 0 or none means one.
      attempts: typeof job.opts.attempts === "number" ? Math.max(job.opts.attempts, 1) : 1,
      failedReason: job.failedReason ?? null,
    }));
    const text =
      rows.length === 0
        ? `no ${state === undefined ? "" : `${state} `}jobs in queue "${queue.name}" from ${start} to ${end}`
        : table(
            [
              { header: "ID" },
              { header: "NAME" },
              { header: "STATE" },
              { header: "CREATED" },
              { header: "STARTED" },
              { header: "FINISHED" },
              { header: "ATTEMPTS", align: "right" },
              { header: "FAILED REASON" },
            ],
            rows.map((row) => [
              truncate(cell(row.id), 40),
              truncate(cell(row.name), 30),
              row.state,
              time(row.timestamp),
              time(row.processedOn ?? undefined),
              time(row.finishedOn ?? undefined),
              `${row.attemptsMade}/${row.attempts}`,
              row.failedReason === null ? "" : truncate(cell(row.failedReason), reasonWidth),
            ]),
          );
    return { json: { queue: queue.name, state: state ?? null, start, end, jobs: rows }, text };
  },
};

/** The state a type's jobs are in (`wait` and the legacy `paused` list hold waiting jobs). */
function stateName(type: JobType): JobState {
  return type === "wait" || type === "paused" ? "waiting" : type;
}
