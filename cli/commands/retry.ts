/** `nimbusq retry <queue>`: failed (or completed) jobs back to wait, as Queue.retryJobs, in steps. */
import { type Command, integerFlag, type Output, oneOf } from "../command.ts";
import { inSteps } from "../progress.ts";

export const retry: Command = {
  name: "retry",
  usage: "retry <queue> [--state failed|completed] [--count N]",
  summary: "move failed (or completed) jobs back to wait",
  help: `Retries the jobs that were failed (or completed) when the command started, as Queue.retryJobs:
each goes back to wait with a "waiting" event. Jobs that fail again meanwhile are not retried twice.
Runs 1,000 jobs per step and shows progress on stderr between steps.

Options:
  --state failed|completed  which jobs (default failed)
  --count N                 retry at most N jobs (default all)

Cost: one count, then about 3 billed commands per job moved, in script calls of up to 500 jobs.`,
  options: { state: { type: "string" }, count: { type: "string" } },
  positionals: { min: 1, max: 1 },
  async run(context, [name], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const state = oneOf("--state", typeof flags.state === "string" ? flags.state : "failed", [
      "failed",
      "completed",
    ] as const);
    const count = integerFlag(flags, "count", undefined, 1);
    // Everything finished by now, and no more than there is now: a job failing again while the
    // retry runs (a fast worker) is not picked up a second time.
    const startedAt = Date.now();
    const present = await queue.count(state);
    const limit = Math.min(present, count ?? present);
    const retried = await inSteps(
      context.progress,
      limit,
      async (max) => {
        const handled = await queue.retryJobs({ state, timestamp: startedAt, limit: max });
        return { handled, finished: handled < max };
      },
      (total) => `retry "${queue.name}": ${total} of ${limit} ${state} jobs moved to wait…`,
    );
    return {
      json: { queue: queue.name, state, retried },
      text: `retried ${retried} ${state} job${retried === 1 ? "" : "s"} of queue "${queue.name}"`,
    };
  },
};
