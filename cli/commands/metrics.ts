/** `nimbusq metrics <queue> completed|failed`: the per-minute counts BullMQ workers keep with `metrics` on. */
import { type Command, integerFlag, type Output, oneOf } from "../command.ts";
import { table, time } from "../table.ts";

const minute = 60_000;

export const metrics: Command = {
  name: "metrics",
  usage: "metrics <queue> completed|failed [--start N] [--end N]",
  summary: "jobs completed or failed per minute (kept by BullMQ workers with metrics on)",
  help: `Shows the per-minute counts of completed or failed jobs that BullMQ workers keep when their
"metrics" option is on (BullMQ's getMetrics), newest minute first. nimbusq's workers do not keep
them: the sweeper's CloudWatch metrics (CompletedSinceLastPass, FailedSinceLastPass) count those jobs.

Options:
  --start N  first point, 0 the newest minute (default 0)
  --end N    last point (default 59: an hour; -1 for all)

Cost: one script call.`,
  options: { start: { type: "string" }, end: { type: "string" } },
  positionals: { min: 2, max: 2 },
  async run(context, [name, typeArg], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const type = oneOf("type", typeArg as string, ["completed", "failed"] as const);
    const start = integerFlag(flags, "start", 0);
    const end = integerFlag(flags, "end", 59, -1);
    const result = await queue.getMetrics(type, start, end);
    // BullMQ closes a minute's point when the first job of a later minute finishes (prevTS): point 0
    // is the minute before prevTS's, point i the i-th before that.
    const newest = Math.floor(result.meta.prevTS / minute) * minute - minute;
    const text =
      result.data.length === 0
        ? `no ${type} metrics for queue "${queue.name}" (BullMQ workers record them with their metrics option; ` +
          "nimbusq's workers are counted by the sweeper's CloudWatch metrics instead)"
        : `${type} jobs of queue "${queue.name}": ${result.meta.count} in all, ${result.count} minutes recorded\n${table(
            [{ header: "MINUTE (UTC)" }, { header: "JOBS", align: "right" }],
            result.data.map((jobs, i) => [time(newest - (start + i) * minute).slice(0, 16), jobs]),
          )}`;
    return { json: { queue: queue.name, type, ...result }, text };
  },
};
