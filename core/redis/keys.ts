/**
 * BullMQ 6's key names are a wire format: they are spelled here exactly as BullMQ spells them, and
 * nowhere else. `{P}` below is the queue key prefix `<prefix>:<queueName>:`.
 */

/** The per-queue keys, by what they hold. */
export const queueKeySuffix = {
  /** STRING, job-id counter (INCRBY by each add call that numbers new jobs; a replayed call does not). */
  idCounter: "id",
  /**
   * HASH, queue meta: `paused`, `concurrency`, `max`, `duration`, `opts.maxLenEvents`, `version`; and
   * nimbusq's own `nq:batchSize`, `nq:concurrency`, `nq:leaseMs`, `nq:limited`, `nq:events` (with
   * `opts.maxLenEvents`), what its workers last registered (lua/trackWorker.lua), `nq:idEpoch`, the
   * epoch of the job-id blocks lone adds reserve (lua/handOffJob.lua),
   * and `nq:resuming`, set while a resume moves a legacy paused list over several calls (lua/pauseQueue.lua).
   */
  meta: "meta",
  /** LIST, ready job ids; LPUSH on add, the next job is the rightmost. */
  wait: "wait",
  /** LIST, legacy 5.x paused list; 6.x only migrates it on resume. */
  legacyPaused: "paused",
  /** LIST, leased jobs. */
  active: "active",
  /** ZSET, score `priority * 2^32 + (pc mod 2^32)`. */
  prioritized: "prioritized",
  /** STRING, priority insertion counter. */
  priorityCounter: "pc",
  /** ZSET, score `due * 4096 + seq`. */
  delayed: "delayed",
  /** ZSET, parents waiting for children; score = timestamp. */
  waitingChildren: "waiting-children",
  /** ZSET, score = finishedOn. */
  completed: "completed",
  /** ZSET, score = finishedOn. */
  failed: "failed",
  /** SET, the stalled checker's snapshot of `active`. */
  stalled: "stalled",
  /** STRING with PX, throttles the stalled check. */
  stalledCheck: "stalled-check",
  /** ZSET, wake-up signal for blocked BullMQ workers. */
  marker: "marker",
  /** STREAM, queue events. */
  events: "events",
  /** STRING, rate-limiter counter. */
  limiter: "limiter",
  /** ZSET, job schedulers by next run. */
  repeat: "repeat",
  /** HASH (nimbusq's own), jobs nimbusq workers completed and failed since the sweeper's last metrics read. */
  finishCounts: "nq:counts",
} as const;

/** The key prefix when none is given: BullMQ's default, so both find the same queues. */
export const defaultPrefix = "bull";

/**
 * How long a script call's replay guard lives (ms) unless a Queue says otherwise: longer than the
 * HTTP client's retries of one call, so a retried call finds its first answer.
 */
export const defaultReplayGuardTtlMs = 600_000;

/** BullMQ's default cap of the events stream (`opts.maxLenEvents`, XADD MAXLEN ~). */
export const defaultMaxLenEvents = 10_000;

export type QueueKeyName = keyof typeof queueKeySuffix;
export type QueueKeys = { readonly [K in QueueKeyName]: string };

/** `<prefix>:<queueName>` — what BullMQ calls the queue key (used in `parent.queue`). */
export function queueQualifiedName(prefix: string, queueName: string): string {
  return `${prefix}:${queueName}`;
}

/** The queue name of a qualified name `<prefix>:<queueName>` (queue names hold no `:`). */
export function queueOfQualified(qualified: string): string {
  return qualified.slice(qualified.lastIndexOf(":") + 1);
}

/** `{P}` = `<prefix>:<queueName>:`, the prefix of every key of one queue. */
export function queueKeyPrefix(prefix: string, queueName: string): string {
  return `${prefix}:${queueName}:`;
}

export function queueKeys(prefix: string, queueName: string): QueueKeys {
  const p = queueKeyPrefix(prefix, queueName);
  const keys = {} as Record<QueueKeyName, string>;
  for (const [name, suffix] of Object.entries(queueKeySuffix) as [QueueKeyName, string][]) {
    keys[name] = p + suffix;
  }
  return keys;
}

/** `{P}<jobId>`, the job hash; its `:lock`, `:logs`, `:dependencies`… keys append to it. */
export function jobKey(prefix: string, queueName: string, jobId: string): string {
  return queueKeyPrefix(prefix, queueName) + jobId;
}

/** The keys that hang off a job's hash `{P}<jobId>`, by what they hold. */
export const jobKeySuffix = {
  /** STRING with PX, the lease: the token of the worker that holds the job. */
  lock: ":lock",
  /** LIST, the job's log lines (RPUSH). */
  logs: ":logs",
  /** SET, a parent's pending children (full child keys). */
  dependencies: ":dependencies",
  /** HASH, a parent's completed children: child key → return value JSON. */
  processed: ":processed",
  /** HASH, a parent's ignored or continued failed children: child key → failedReason. */
  failed: ":failed",
  /** ZSET, a parent's children that failed under failParentOnFailure. */
  unsuccessful: ":unsuccessful",
} as const;

export type JobSubKeys = { readonly [K in keyof typeof jobKeySuffix]: string };

/** The keys of one job: its hash plus `:lock`, `:logs`, `:dependencies`… */
export function jobSubKeys(jobHashKey: string): JobSubKeys {
  const keys = {} as Record<keyof typeof jobKeySuffix, string>;
  for (const [name, suffix] of Object.entries(jobKeySuffix) as [keyof typeof jobKeySuffix, string][]) {
    keys[name] = jobHashKey + suffix;
  }
  return keys;
}

/** `{P}metrics:<completed|failed>` and its `:data` list, kept by BullMQ workers with metrics on. */
export function metricsKeys(
  prefix: string,
  queueName: string,
  type: "completed" | "failed",
): { metrics: string; data: string } {
  const metrics = `${queueKeyPrefix(prefix, queueName)}metrics:${type}`;
  return { metrics, data: `${metrics}:data` };
}

/** `{P}de:<deduplicationId>`, owner of a deduplication window. */
export function deduplicationKey(prefix: string, queueName: string, deduplicationId: string): string {
  return `${queueKeyPrefix(prefix, queueName)}de:${deduplicationId}`;
}

/**
 * nimbusq's own replay guard for one script call, `<prefix>:nq-req:<queueName>:<token>`: beside the
 * queue's key space, not in it, so that nothing BullMQ, Bull Board or `SCAN <prefix>:<queue>:*` sees
 * as the queue's is left by nimbusq's calls, and obliterate leaves no key of the queue behind (guards
 * expire on their own). The queue name still lies inside the key, so a `{hash-tag}` in the prefix or
 * the name keeps the guard in the queue's slot. (Guards used to be `{P}nq-req:<token>`; job ids in
 * that space stay refused.)
 */
export function replayGuardKey(prefix: string, queueName: string, token: string): string {
  return `${prefix}:nq-req:${queueName}:${token}`;
}

/**
 * nimbusq's keys of a queue's groups (BullMQ Pro's groups) under its prefix `{P}`, as
 * lua/includes/groupKeys.lua names them: the round-robin ring of groups with ready jobs, the turn
 * counter, grouped delayed jobs, paused groups, running jobs per group, rate-limited groups and the
 * inbox of grouped jobs made ready by a call that could not name their group's key.
 */
export function groupKeys(queuePrefix: string) {
  return {
    ring: `${queuePrefix}nq:groups`,
    counter: `${queuePrefix}nq:gc`,
    delayed: `${queuePrefix}nq:gdelayed`,
    paused: `${queuePrefix}nq:gpaused`,
    running: `${queuePrefix}nq:grun`,
    limited: `${queuePrefix}nq:glimited`,
    inbox: `${queuePrefix}nq:ginbox`,
  };
}

/** The keys getJobStates reads: the queue's, and its grouped delayed jobs. */
export function stateKeys(prefix: string, queueName: string) {
  return {
    ...queueKeys(prefix, queueName),
    groupDelayed: groupKeys(queueKeyPrefix(prefix, queueName)).delayed,
  };
}

/** `{P}nq:g:<gid>`, a group's ready jobs (ZSET). */
export function groupJobsKey(queuePrefix: string, groupId: string): string {
  return `${queuePrefix}nq:g:${groupId}`;
}

/** `{P}nq:workers`, nimbusq's registry of running worker invocations (a single `:` keeps it out of job ids). */
export function workerRegistryKey(prefix: string, queueName: string): string {
  return `${queueKeyPrefix(prefix, queueName)}nq:workers`;
}

/**
 * `<prefix>:nq:due`, the attention index of a key prefix: one entry per queue that needs the sweeper,
 * scored with when (ms). The scripts that change a queue move its entry earlier; the sweep sets it to
 * the queue's next due time or removes it. An idle deployment's tick reads this one key.
 */
export function attentionKey(prefix: string): string {
  return `${prefix}:nq:due`;
}

/** The sweeper's lock and its event-forwarding cursors, one pair per key prefix. */
export function sweeperKeys(prefix: string): { lock: string; cursors: string } {
  return { lock: `${prefix}:nq:sweeper:lock`, cursors: `${prefix}:nq:sweeper:cursors` };
}

/**
 * The keys of one add staged over several calls (core/adds/staged-add.ts), in that add's own request
 * space beside its first queue, `<prefix>:nq-req:<queueName>:<token>:stage…`: like replay guards,
 * never under `{P}`, so no BullMQ reader, Bull Board, obliterate or `SCAN <prefix>:<queue>:*` takes
 * them for the queue's, and a `{hash-tag}` in the prefix keeps them in the queue's slot. All carry a
 * TTL; the commit deletes them. `queue(n)` are the staged ids of the add's n-th queue (from 1).
 */
export function stagingKeys(prefix: string, queueName: string, token: string) {
  const stage = `${replayGuardKey(prefix, queueName, token)}:stage`;
  return {
    /** HASH, what was staged: `chunks`, `keys`, `<n>:<structure>` and `deps:<parentKey>` counts. */
    stage,
    /** LIST, the staged job hashes (their final keys) with auto or generated ids. */
    stagedKeys: `${stage}:keys`,
    /** LIST, the staged job hashes with custom ids. */
    stagedCustomKeys: `${stage}:custom-keys`,
    /** HASH, parent key → parent queue key prefix; each parent's staged children in `<stage>:deps:<parentKey>`. */
    parents: `${stage}:parents`,
    queue: (n: number) => ({
      stagedWait: `${stage}:${n}:wait`,
      stagedLifo: `${stage}:${n}:lifo`,
      stagedPrioritized: `${stage}:${n}:prioritized`,
      stagedDelayed: `${stage}:${n}:delayed`,
      stagedWaitingChildren: `${stage}:${n}:waiting-children`,
    }),
  };
}
