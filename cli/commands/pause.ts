/**
 * `nimbusq pause <queue>` and `nimbusq resume <queue>`: BullMQ's global pause flag in the queue's meta;
 * with `--group G`, one group of the queue (BullMQ Pro's pauseGroup / resumeGroup).
 */
import type { Command, Context, Output } from "../command.ts";

function pauseCommand(name: "pause" | "resume"): Command {
  const pausing = name === "pause";
  return {
    name,
    usage: `${name} <queue> [--group G]`,
    summary: pausing
      ? "stop every worker taking jobs from the queue (or one group)"
      : "let workers take jobs again",
    help: `${
      pausing
        ? `Pauses the queue for every worker, nimbusq's and BullMQ's: running jobs finish, no new job
starts until "resume". Jobs can still be added.`
        : "Resumes a paused queue: workers take its jobs again."
    } With --group G, ${pausing ? "pauses only that group: the other groups and ungrouped jobs go on" : "resumes only that group: it is served in turn again"}. Cost: one script call.

Options:
  --group G  one group of the queue (opts.group.id)`,
    options: { group: { type: "string" } },
    positionals: { min: 1, max: 1 },
    async run(context: Context, [queueName], flags): Promise<Output> {
      const queue = context.queue(queueName as string);
      if (typeof flags.group === "string") {
        const group = flags.group;
        const changed = pausing ? await queue.pauseGroup(group) : await queue.resumeGroup(group);
        const was = changed ? "" : ` (it was ${pausing ? "paused" : "not paused"} already)`;
        return {
          json: { queue: queue.name, group, paused: pausing, changed },
          text: `${pausing ? "paused" : "resumed"} group "${group}" of queue "${queue.name}"${was}`,
        };
      }
      if (pausing) await queue.pause();
      else await queue.resume();
      return {
        json: { queue: queue.name, paused: pausing },
        text: `${pausing ? "paused" : "resumed"} queue "${queue.name}"`,
      };
    },
  };
}

export const pause = pauseCommand("pause");
export const resume = pauseCommand("resume");
