/** `nimbusq clean <queue> <state>`: deletes old jobs of one state (Queue.clean), in steps. */
import { cleanStates } from "../../core/index.ts";
import { type Command, integerFlag, type Output, oneOf } from "../command.ts";
import { inSteps } from "../progress.ts";

export const clean: Command = {
  name: "clean",
  usage: "clean <queue> <state> [--grace ms] [--limit N]",
  summary: "delete the jobs of one state older than a grace period",
  help: `Deletes the jobs of one state whose time (finished, else started, else created) is at least
--grace ms before the command started, as Queue.clean; a scheduler's current iteration and active
jobs a worker holds stay. Runs 1,000 jobs per step (one "cleaned" event each), progress on stderr.

States: ${cleanStates.join(", ")}
Options:
  --grace MS  keep jobs younger than this (default 0: all of them go)
  --limit N   delete at most N jobs (default all)

Cost: one count, then about 3 to 5 billed commands per job deleted, in steps of up to 300 jobs.`,
  options: { grace: { type: "string" }, limit: { type: "string" } },
  positionals: { min: 2, max: 2 },
  async run(context, [name, stateArg], flags): Promise<Output> {
    const queue = context.queue(name as string);
    const state = oneOf("state", stateArg as string, cleanStates);
    const grace = integerFlag(flags, "grace", 0);
    const limitFlag = integerFlag(flags, "limit", undefined, 1);
    const startedAt = Date.now();
    const present = await queue.count(state);
    const limit = Math.min(present, limitFlag ?? present);
    const deleted = await inSteps(
      context.progress,
      limit,
      async (max) => {
        // The cutoff stays where it was when the command started, however long the steps take.
        const ids = await queue.clean(grace + (Date.now() - startedAt), max, state);
        return { handled: ids.length, finished: ids.length < max };
      },
      (total) => `clean "${queue.name}": ${total} of at most ${limit} ${state} jobs deleted…`,
    );
    return {
      json: { queue: queue.name, state, grace, deleted },
      text: `deleted ${deleted} ${state} job${deleted === 1 ? "" : "s"} of queue "${queue.name}"`,
    };
  },
};
