/** `nimbusq schedulers <queue>`: the queue's job schedulers, soonest first, without template data. */
import { type Command, integerFlag, type Output } from "../command.ts";
import { table, time } from "../table.ts";

export const schedulers: Command = {
  name: "schedulers",
  usage: "schedulers <queue> [--start N] [--end N]",
  summary: "the queue's job schedulers, soonest next run first",
  help: `Lists the job schedulers (cron patterns or every-N-ms) by next run, soonest first. The
template's data is never shown; its options are, with --json.

Options:
  --start N  first index (default 0)
  --end N    last index (default 99; -1 for all)

Cost: one count and one script call.`,
  options: { start: { type: "string" }, end: { type: "string" } },
  positionals: { min: 1, max: 1 },
  async run(context, [name], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const start = integerFlag(flags, "start", 0);
    const end = integerFlag(flags, "end", 99, -1);
    const [list, total] = await Promise.all([
      queue.getJobSchedulers(start, end, true),
      queue.getJobSchedulersCount(),
    ]);
    const rows = list.map(({ template, ...scheduler }) => ({
      ...scheduler,
      ...(template?.opts ? { template: { opts: template.opts } } : {}),
    }));
    const text =
      rows.length === 0
        ? `no job schedulers in queue "${queue.name}"`
        : table(
            [
              { header: "ID" },
              { header: "NAME" },
              { header: "NEXT RUN" },
              { header: "REPEAT" },
              { header: "TZ" },
              { header: "RUNS", align: "right" },
              { header: "ENDS" },
            ],
            rows.map((s) => [
              s.key,
              s.name,
              time(s.next),
              s.pattern ?? (s.every !== undefined ? `every ${s.every} ms` : ""),
              s.tz,
              s.limit === undefined ? (s.iterationCount ?? 0) : `${s.iterationCount ?? 0}/${s.limit}`,
              time(s.endDate),
            ]),
          );
    return { json: { queue: queue.name, count: total, schedulers: rows }, text };
  },
};
