/** `nimbusq redrive <queue>`: dead letters back into their queue as new jobs (Queue.redrive), in steps. */
import { defaultDeadLetterQueue } from "../../core/index.ts";
import { type Command, integerFlag, type Output } from "../command.ts";
import { inSteps } from "../progress.ts";

export const redrive: Command = {
  name: "redrive",
  usage: "redrive <queue> [--from <dead-letter queue>] [--count N]",
  summary: "move dead letters back into their queue as new jobs",
  help: `Moves the dead letters of <queue> (waiting, failed or completed in the dead-letter queue) back
into it as new jobs, as Queue.redrive. Takes at most the letters there when it started, so jobs that
die again meanwhile are not redriven in a loop. A letter whose failed job was retried since ("nimbusq
retry") is dropped, not redriven: the job already runs again. Runs 1,000 letters per step, progress on
stderr.

Options:
  --from Q   the dead-letter queue (default <queue>-dlq)
  --count N  redrive at most N letters (default all)

Cost: a count before and after, and per page of up to 100 letters one read and one move script call.`,
  options: { from: { type: "string" }, count: { type: "string" } },
  positionals: { min: 1, max: 1 },
  async run(context, [name], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const from = context.queue(
      typeof flags.from === "string" ? flags.from : defaultDeadLetterQueue(queue.name),
    );
    const count = integerFlag(flags, "count", undefined, 1);
    const present = await from.count("waiting", "failed", "completed");
    const limit = Math.min(present, count ?? present);
    const redriven = await inSteps(
      context.progress,
      limit,
      async (max) => {
        const result = await queue.redrive({ from: from.name, count: max });
        return { handled: result.count, finished: !result.more };
      },
      (total) => `redrive "${from.name}" → "${queue.name}": ${total} of ${limit} letters moved…`,
    );
    const left = await from.count("waiting", "failed", "completed");
    const plural = (n: number) => (n === 1 ? "" : "s");
    return {
      json: { queue: queue.name, from: from.name, redriven, left },
      text: `redrove ${redriven} dead letter${plural(redriven)} from "${from.name}" into "${queue.name}"; ${left} job${plural(left)} left in "${from.name}"`,
    };
  },
};
