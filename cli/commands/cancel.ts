/** `nimbusq cancel <queue> <id> [--reason R]`: cancels one job from anywhere (core/job/cancel.ts). */
import type { CancelResult } from "../../core/index.ts";
import type { Command, Output } from "../command.ts";
import { record } from "../table.ts";

const said: Record<CancelResult["outcome"], string> = {
  cancelled: "failed now with the reason",
  signalled: "a nimbusq worker runs it: aborted at its next lease extension, then failed with the reason",
  recorded: "a worker nimbusq cannot reach (BullMQ's) runs it: it ends as that worker ends it",
  finished: "had finished already: nothing changed",
};

export const cancel: Command = {
  name: "cancel",
  usage: "cancel <queue> <id> [--reason R]",
  summary: "cancel a job: waiting, it fails now; running, it is aborted where it runs",
  help: `Cancels one job. A waiting, delayed or prioritized job ends failed at once with the reason
(no retry, no dead letter). A job a nimbusq worker runs has its job.signal aborted at that worker's next
lease extension (within half its lease) and ends failed with the reason unless its processor
returns normally. A job a BullMQ worker runs is only recorded. Exit code 1 for an unknown job or one
that had finished.

Options:
  --reason R  the failedReason (default "cancelled"; at most 1,000 characters)

Cost: two calls (the job's options, then the cancel).`,
  options: { reason: { type: "string" } },
  positionals: { min: 2, max: 2 },
  async run(context, [name, id], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const reason = typeof flags.reason === "string" ? flags.reason : undefined;
    const result = await queue.cancelJob(id as string, reason);
    if (result.outcome === "finished") {
      throw new Error(`job "${id}" in queue "${queue.name}" is ${result.state}: there is nothing to cancel`);
    }
    const shown = { id, ...result };
    return {
      json: shown,
      text: record([
        ["id", id],
        ["outcome", `${result.outcome} (${said[result.outcome]})`],
        ["was", result.state],
      ]),
    };
  },
};
