/**
 * A queue's groups (BullMQ Pro's groups, docs/groups.md): their summaries, pause and resume. The
 * Queue's group methods (queue-getters.ts) are thin over these.
 */
import { UnexpectedReplyError } from "../errors.ts";
import { encodeIds } from "../redis/codec.ts";
import { decodePauseGroup, decodeReadGroups, pauseGroup, readGroups } from "../redis/generated/scripts.ts";
import { groupJobsKey, groupKeys, queueKeyPrefix } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { flag, runScript } from "../redis/scripts.ts";

/**
 * A group's state: `waiting` (ready jobs, served in turn), `maxed` (ready jobs, but as many running
 * as group.concurrency allows), `limited` (ready jobs, held by group.limit or rateLimitGroup),
 * `paused`, `active` (no ready jobs, some running) or `empty`.
 */
export type GroupStatus = "waiting" | "maxed" | "limited" | "paused" | "active" | "empty";

export interface GroupSummary {
  id: string;
  status: GroupStatus;
  /** Ready jobs in the group (delayed ones are not counted until they are due). */
  waiting: number;
  /** Jobs of the group running now. */
  active: number;
}

/** Summaries of the given groups, or of every known group from `start` to `stop` (sorted by id). */
export async function readGroupSummaries(
  context: QueueContext,
  ids: string[] | undefined,
  start = 0,
  stop = -1,
): Promise<{ total: number; groups: GroupSummary[] }> {
  const queuePrefix = queueKeyPrefix(context.prefix, context.queueName);
  const keys = groupKeys(queuePrefix);
  const reply = decodeReadGroups(
    await runScript(
      context.port,
      readGroups,
      { ring: keys.ring, paused: keys.paused, running: keys.running },
      { prefix: queuePrefix, ids: ids ? encodeIds(ids) : "", start, stop },
    ),
  );
  const now = context.clock();
  const groups = reply.groups.map(({ groupId, ready, running, paused, inRing, limitedUntil }) => ({
    id: groupId,
    status: statusOf(ready, running, paused === 1, inRing === 1, limitedUntil > now),
    waiting: ready,
    active: running,
  }));
  return { total: reply.total, groups };
}

function statusOf(
  ready: number,
  running: number,
  paused: boolean,
  inRing: boolean,
  limited: boolean,
): GroupStatus {
  if (paused) return "paused";
  if (ready > 0) return inRing ? "waiting" : limited ? "limited" : "maxed";
  return running > 0 ? "active" : "empty";
}

/** Pauses (or resumes) a group; true when its state changed. */
export async function setGroupPaused(context: QueueContext, id: string, paused: boolean): Promise<boolean> {
  const queuePrefix = queueKeyPrefix(context.prefix, context.queueName);
  const keys = groupKeys(queuePrefix);
  const reply = decodePauseGroup(
    await runScript(
      context.port,
      pauseGroup,
      {
        meta: `${queuePrefix}meta`,
        ring: keys.ring,
        counter: keys.counter,
        paused: keys.paused,
        groupJobs: groupJobsKey(queuePrefix, id),
      },
      { groupId: id, pause: flag(paused) },
    ),
  );
  if (reply.changed !== 0 && reply.changed !== 1)
    throw new UnexpectedReplyError(
      `pauseGroup of group "${id}" in queue "${context.queueName}": unexpected reply`,
    );
  return reply.changed === 1;
}
