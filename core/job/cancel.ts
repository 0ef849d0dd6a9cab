/**
 * Cancelling a job from anywhere (`queue.cancelJob`, `job.cancel`, the HTTP API, the CLI): a job
 * that waits ends failed at once; a running one is aborted by its nimbusq worker at the worker's next
 * lease extension (lua/cancelJob.lua says how, and what happens when a BullMQ worker runs it).
 */
import { JobNotFoundError } from "../errors.ts";
import { decodeOptions, hashFromFlat } from "../redis/codec.ts";
import {
  cancelJobOutcomes,
  cancelJob as cancelJobScript,
  decodeCancelJob,
} from "../redis/generated/scripts.ts";
import {
  attentionKey,
  defaultMaxLenEvents,
  defaultReplayGuardTtlMs,
  jobKey,
  jobSubKeys,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
} from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import type { KeepJobs } from "../types.ts";
import { Checker } from "../validate.ts";
import { keptBy, parentPolicyOf } from "./ack-entry.ts";

/** The longest cancel reason (characters): it rides in the job's lock until the worker reads it. */
export const maxCancelReasonLength = 1000;

/** The reason a cancel gives when its caller gives none. */
export const defaultCancelReason = "cancelled";

/**
 * What a cancel did. `cancelled`: the job waited (or its lease had lapsed) and is failed now.
 * `signalled`: a nimbusq worker runs it; its `job.signal` aborts at that worker's next lease extension
 * (within half the lease), and it ends failed with the reason unless its processor returns
 * normally. `recorded`: a worker nimbusq cannot reach (a BullMQ worker) runs it; it ends as that worker
 * ends it, and a nimbusq worker that leases it again later fails it at once. `finished`: it had
 * completed or failed already; nothing changed.
 */
export type CancelOutcome = "cancelled" | "signalled" | "recorded" | "finished";

export interface CancelResult {
  outcome: CancelOutcome;
  /** The job's state before the cancel (wait, paused, prioritized, delayed, waiting-children, active, completed, failed). */
  state: string;
}

const outcomes: Record<number, CancelOutcome> = {
  [cancelJobOutcomes.cancelled]: "cancelled",
  [cancelJobOutcomes.signalled]: "signalled",
  [cancelJobOutcomes.recorded]: "recorded",
  [cancelJobOutcomes.finished]: "finished",
};

/**
 * How a cancel writes: its replay guard, events cap and level (a failed event unless none); a Queue passes
 * its own, a Job's cancel the defaults.
 */
export interface CancelSettings {
  guardTtlMs: number;
  maxLenEvents: number;
  events: "all" | "final" | "none";
}

const defaults: CancelSettings = {
  guardTtlMs: defaultReplayGuardTtlMs,
  maxLenEvents: defaultMaxLenEvents,
  events: "all",
};

const eventsLevels = { all: 2, final: 1, none: 0 };

/** Checks a cancel's id and reason; answers the reason to use. */
function checkCancel(where: string, id: unknown, reason: unknown): string {
  const check = new Checker(where);
  check.string("id", id);
  if (reason === undefined) return defaultCancelReason;
  const text = check.string("reason", reason);
  if (text.length > maxCancelReasonLength) {
    check.fail("reason", `at most ${maxCancelReasonLength} characters`, `${text.length} characters`);
  }
  return text;
}

/**
 * Cancels job `id` with `reason` (default "cancelled"; see CancelOutcome); JobNotFoundError when there
 * is no such job. Two calls: the job's options (its removeOnFail and parent policy), then the cancel.
 */
export async function cancelJob(
  context: QueueContext,
  id: string,
  given: string | undefined,
  settings: CancelSettings = defaults,
): Promise<CancelResult> {
  const { port, prefix, queueName } = context;
  const reason = checkCancel(`Queue "${queueName}": cancelJob`, id, given);
  const subject = `job "${id}" in queue "${queueName}"`;
  const flat = await port.hgetall(jobKey(prefix, queueName, id));
  if (flat.length === 0) throw new JobNotFoundError(`cancel: ${subject} does not exist`);
  const hash = hashFromFlat(flat);
  const kept = keptBy(decodeOptions(hash.opts).removeOnFail as KeepJobs | undefined);
  const parent = hash.parent === undefined ? undefined : (JSON.parse(hash.parent) as object);
  const keys = queueKeys(prefix, queueName);
  const key = jobKey(prefix, queueName, id);
  const reply = decodeCancelJob(
    await runScript(
      port,
      cancelJobScript,
      {
        job: key,
        lock: jobSubKeys(key).lock,
        failed: keys.failed,
        completed: keys.completed,
        events: keys.events,
        replayGuard: replayGuardKey(prefix, queueName, crypto.randomUUID()),
        attention: attentionKey(prefix),
      },
      {
        prefix: queueKeyPrefix(prefix, queueName),
        jobId: id,
        reason,
        now: context.clock(),
        guardTtl: settings.guardTtlMs,
        maxLenEvents: settings.maxLenEvents,
        events: eventsLevels[settings.events],
        keepCount: kept.count,
        keepAge: kept.age,
        keepLimit: kept.limit,
        parentPolicy: parentPolicyOf(parent),
      },
    ),
  );
  if (reply.form === "refused") throw new JobNotFoundError(`cancel: ${subject} does not exist`);
  return { outcome: outcomes[reply.outcome] as CancelOutcome, state: reply.state };
}
