/** `nimbusq pause <queue>` and `nimbusq resume <queue>`: BullMQ's global pause flag in the queue's meta. */
import type { Command, Context, Output } from "../command.ts";

function pauseCommand(name: "pause" | "resume"): Command {
  const pausing = name === "pause";
  return {
    name,
    usage: `${name} <queue>`,
    summary: pausing ? "stop every worker taking jobs from the queue" : "let workers take jobs again",
    help: pausing
      ? `Pauses the queue for every worker, nimbusq's and BullMQ's: running jobs finish, no new job
starts until "resume". Jobs can still be added. Cost: one script call.`
      : `Resumes a paused queue: workers take its jobs again. Cost: one script call.`,
    options: {},
    positionals: { min: 1, max: 1 },
    async run(context: Context, [queueName]): Promise<Output> {
      const queue = context.queue(queueName as string);
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
