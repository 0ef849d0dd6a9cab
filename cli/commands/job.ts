/** `nimbusq job <queue> <id>`: one job whole, its data included (the one command that shows data). */
import type { Job } from "../../core/index.ts";
import type { Command, Output } from "../command.ts";
import { printable, record, time } from "../table.ts";

/** A value as compact JSON for a table line; undefined as `-`. */
function json(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

function view(job: Job, state: string, logs: number) {
  return {
    id: job.id,
    name: job.name,
    state,
    data: job.data,
    opts: job.opts,
    progress: job.progress,
    returnvalue: job.returnvalue ?? null,
    failedReason: job.failedReason ?? null,
    stacktrace: job.stacktrace,
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    stalledCounter: job.stalledCounter,
    timestamp: job.timestamp,
    delay: job.delay,
    priority: job.priority,
    processedOn: job.processedOn ?? null,
    finishedOn: job.finishedOn ?? null,
    processedBy: job.processedBy ?? null,
    parentKey: job.parentKey ?? null,
    repeatJobKey: job.repeatJobKey ?? null,
    deduplicationId: job.deduplicationId ?? null,
    logs,
  };
}

export const job: Command = {
  name: "job",
  usage: "job <queue> <id>",
  summary: "one job: every field, its data, state and log count",
  help: `Shows one job: its fields, data, options, state and how many log lines it has; the latest
stack trace follows the table. Exit code 1 when there is no such job.

Cost: two calls (the job with its state, then its log count).`,
  options: {},
  positionals: { min: 2, max: 2 },
  async run(context, [name, id], _flags): Promise<Output> {
    const queue = context.queue(name as string);
    const found = await queue.getJobWithState(id as string);
    if (!found) throw new Error(`job "${id}" not found in queue "${queue.name}"`);
    const { count } = await queue.getJobLogs(id as string, 0, 0);
    const shown = view(found.job, found.state, count);
    const lines = record([
      ["id", shown.id],
      ["name", shown.name],
      ["state", shown.state],
      ["data", json(shown.data)],
      ["opts", json(shown.opts)],
      ["progress", json(shown.progress)],
      ["returnvalue", json(shown.returnvalue ?? undefined)],
      ["failedReason", shown.failedReason],
      ["attempts", `${shown.attemptsMade} made, ${shown.attemptsStarted} started`],
      ["stalled", shown.stalledCounter],
      ["created", time(shown.timestamp)],
      ["delay", shown.delay],
      ["priority", shown.priority],
      ["started", time(shown.processedOn ?? undefined)],
      ["finished", time(shown.finishedOn ?? undefined)],
      ["processedBy", shown.processedBy],
      ["parent", shown.parentKey],
      ["scheduler", shown.repeatJobKey],
      ["deduplicationId", shown.deduplicationId],
      ["logs", shown.logs],
    ]);
    const trace = shown.stacktrace.at(-1);
    if (!trace) return { json: shown, text: lines };
    return {
      json: shown,
      text: `${lines}\n\nlatest stack trace:\n${trace.split("\n").map(printable).join("\n")}`,
    };
  },
};
