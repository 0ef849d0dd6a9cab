/**
 * Worker.rateLimitGroup (BullMQ Pro's): holds one group until a time, while the other groups and
 * ungrouped jobs keep going. The job whose processor asked then throws RateLimitError and goes back
 * to the front of its group; the pipeline does not stop for it (core/worker/pipeline.ts).
 */
import type { ActiveJob } from "../job/active-job.ts";
import { groupIdOf } from "../redis/codec.ts";
import { decodeRateLimitGroup, rateLimitGroup } from "../redis/generated/scripts.ts";
import { groupKeys, queueKeyPrefix } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import { Checker } from "../validate.ts";

/** The Worker's `group` option: `concurrency` and `limit: { max, duration }`, positive integers. */
export function checkGroupOptions(check: Checker, group: unknown): void {
  if (group === undefined) return;
  const options = check.object("group", group, ["concurrency", "limit"]);
  if (options.concurrency !== undefined) check.integer("group.concurrency", options.concurrency, 1);
  if (options.limit === undefined) return;
  const limit = check.object("group.limit", options.limit, ["max", "duration"]);
  check.integer("group.limit.max", limit.max, 1);
  check.integer("group.limit.duration", limit.duration, 1);
}

export async function holdGroup(context: QueueContext, job: ActiveJob, ms: number): Promise<void> {
  const check = new Checker(`Worker "${context.queueName}": rateLimitGroup`);
  check.integer("ms", ms, 1);
  const groupId = job.groupId || groupIdOf(job.opts);
  if (groupId === "") check.fail("job", "a grouped job (opts.group.id)", `job ${job.id}`);
  const queuePrefix = queueKeyPrefix(context.prefix, context.queueName);
  const keys = groupKeys(queuePrefix);
  decodeRateLimitGroup(
    await runScript(
      context.port,
      rateLimitGroup,
      { meta: `${queuePrefix}meta`, ring: keys.ring, limited: keys.limited },
      { groupId, untilMs: context.clock() + ms },
    ),
  );
  job.groupRateLimited = true;
}
