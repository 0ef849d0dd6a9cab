/** `nimbusq groups <queue>`: the queue's groups (BullMQ Pro's groups) with their counts. */
import type { Command, Output } from "../command.ts";
import { table } from "../table.ts";

export const groups: Command = {
  name: "groups",
  usage: "groups <queue> [--start N]",
  summary: "list the queue's groups: status, ready and running jobs",
  help: `Lists the groups of a queue that has grouped jobs (opts.group): every group with ready jobs,
paused, rate-limited or running, sorted by id, 100 from --start. STATUS is waiting (served in turn),
maxed (as many running as group.concurrency allows), limited (held by a rate limit), paused, active
(none ready, some running) or empty. Pause or resume one group with "pause <queue> --group G" /
"resume <queue> --group G".

Options:
  --start N  the first group to list, from 0 (default 0)

Cost: one script call (it reads each listed group's size).`,
  options: { start: { type: "string" } },
  positionals: { min: 1, max: 1 },
  async run(context, [name], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const start = flags.start === undefined ? 0 : Number(flags.start);
    if (!Number.isInteger(start) || start < 0)
      throw new Error(`--start: a non-negative integer, got "${flags.start}"`);
    const list = await queue.getGroups(start, start + 99);
    return {
      json: { queue: queue.name, start, groups: list },
      text:
        list.length === 0
          ? `queue "${queue.name}" has no groups${start > 0 ? ` from ${start}` : ""}`
          : table(
              [
                { header: "GROUP" },
                { header: "STATUS" },
                { header: "WAITING", align: "right" },
                { header: "ACTIVE", align: "right" },
              ],
              list.map((group) => [group.id, group.status, group.waiting, group.active]),
            ),
    };
  },
};
