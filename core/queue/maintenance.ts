/**
 * Queue-wide maintenance in bounded steps, with BullMQ's semantics: clean, drain, obliterate,
 * retryJobs and promoteJobs. Each step is one script call that looks at no more than a few thousand
 * jobs, so no call holds Redis for long, and each carries its own replay guard, so a call repeated by
 * the HTTP client returns its first answer instead of acting twice. The loops here run steps until
 * the work is done.
 */
import { QueueStateError, UnexpectedReplyError } from "../errors.ts";
import {
  type CleanJobsArgs,
  cleanJobs,
  decodeCleanJobs,
  decodeMoveJobsToWait,
  decodeObliterateQueue,
  decodePauseQueue,
  moveJobsToWait,
  obliterateQueue,
  obliterateQueueCodes,
  pauseQueue,
} from "../redis/generated/scripts.ts";
import {
  attentionKey,
  defaultReplayGuardTtlMs,
  groupKeys,
  type QueueKeys,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
} from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import { Checker } from "../validate.ts";

/**
 * A step of clean or drain (lua/cleanJobs.lua's units: an entry kept 1, a job deleted 3 or more; a
 * list's walk to the entries it deletes ~120 entries, a margin over the ~150 measured) reads
 * `cleanBudget` entries and stops after that many units, or once deleting after `cleanCap` with the
 * walk. test/bench/maintenance-scale.ts at 1,000,000 jobs, Redis on a core of its own: 600 units held
 * Redis 3–5 ms, 3,300 ~17 ms, so a step deleting far from both ends of a long list deletes fewer jobs.
 */
const cleanBudget = 600;
const cleanCap = 3300;
/** Most jobs one step of obliterate, retryJobs or promoteJobs handles, unless told otherwise (BullMQ's default). */
const defaultStepCount = 1000;
/**
 * Most jobs one script call of obliterate (deletions) or of retryJobs and promoteJobs (moves) handles,
 * whatever `count` asks: BullMQ's `count` sizes its steps, ours are split further so that no call
 * holds Redis for 20 ms (same measurement as `cleanBudget`).
 */
const callCount = { obliterate: 200, move: 300 };
/** The largest `count` a caller may ask one step to handle. */
const maxStepCount = 10_000;
/** How long a step's replay guard lives (ms): longer than the HTTP client's retries. */
const guardTtl = defaultReplayGuardTtlMs;

/** Each state `clean` accepts, as BullMQ's (`waiting` is `wait`, `paused` the legacy list), and its structure. */
const cleanable = {
  completed: "completed",
  failed: "failed",
  wait: "wait",
  waiting: "wait",
  active: "active",
  paused: "legacyPaused",
  delayed: "delayed",
  prioritized: "prioritized",
} as const satisfies Record<string, keyof QueueKeys>;
export type CleanState = keyof typeof cleanable;
/** The one list of cleanable states the CLI and the HTTP API offer. */
export const cleanStates = Object.keys(cleanable) as [CleanState, ...CleanState[]];

export interface ObliterateOptions {
  /** Also delete active jobs (their workers lose them); without it, active jobs refuse the obliterate. */
  force?: boolean;
  /** Most jobs deleted per step (default 1000, at most 10,000). */
  count?: number;
}

export interface RetryJobsOptions {
  /** Which finished jobs to retry: `failed` (default) or `completed`. */
  state?: "failed" | "completed";
  /** Most jobs moved per step (default 1000, at most 10,000), as BullMQ's `count`. */
  count?: number;
  /** Only jobs finished at or before this time (ms); default now. */
  timestamp?: number;
  /** nimbusq: stop after this many jobs in all (default: every matching job). */
  limit?: number;
}

export interface PromoteJobsOptions {
  /** Most jobs moved per step (default 1000, at most 10,000), as BullMQ's `count`. */
  count?: number;
  /** nimbusq: stop after this many jobs in all (default: every delayed job). */
  limit?: number;
}

function checkerName(context: QueueContext, operation: string): string {
  return `Queue "${context.queueName}": ${operation}`;
}

function guard(context: QueueContext, token: string, step: number): string {
  return replayGuardKey(context.prefix, context.queueName, `${token}-${step}`);
}

interface CleanRun {
  state: CleanJobsArgs["state"];
  key: string;
  /** The latest finishing time deleted, "" for any (drain). */
  cutoff: number | "";
  limit: number;
  emit: boolean;
  listIds: boolean;
}

/** Runs clean steps over one structure until it is done; returns the deleted ids (or only their count). */
async function cleanStructure(
  context: QueueContext,
  run: CleanRun,
): Promise<{ ids: string[]; count: number }> {
  const { port, prefix, queueName } = context;
  const keys = queueKeys(prefix, queueName);
  const token = crypto.randomUUID();
  const ids: string[] = [];
  let offset = 0;
  let count = 0;
  for (let step = 0; ; step++) {
    const reply = await runScript(
      port,
      cleanJobs,
      {
        source: run.key,
        schedulers: keys.repeat,
        events: keys.events,
        replayGuard: guard(context, token, step),
      },
      {
        prefix: queueKeyPrefix(prefix, queueName),
        state: run.state,
        cutoff: run.cutoff,
        offset,
        take: cleanBudget,
        budget: cleanBudget,
        cap: cleanCap,
        limit: run.limit > 0 ? run.limit - count : 0,
        total: count,
        emit: run.emit ? "1" : "",
        listIds: run.listIds ? "1" : "",
        guardTtl,
      },
    );
    const answer = decodeCleanJobs(reply);
    for (const id of answer.ids) ids.push(id);
    count += answer.deleted;
    offset += answer.kept;
    if (answer.finished === 1) return { ids, count };
  }
}

/**
 * BullMQ's `clean(grace, limit, state)`: deletes the jobs of one state whose time (finishedOn, else
 * processedOn, else timestamp) is `grace` ms old or more, at most `limit` (0 for all), and returns
 * their ids. Writes one `cleaned {count}` event.
 */
export async function clean(
  context: QueueContext,
  grace: number,
  limit: number,
  state: CleanState,
): Promise<string[]> {
  const check = new Checker(checkerName(context, "clean"));
  check.integer("grace", grace, 0);
  check.integer("limit", limit, 0);
  if (typeof state !== "string" || !Object.hasOwn(cleanable, state))
    check.fail("state", `one of ${Object.keys(cleanable).join(", ")}`, state);
  const structure = cleanable[state];
  const keys = queueKeys(context.prefix, context.queueName);
  const { ids } = await cleanStructure(context, {
    state: structure === "legacyPaused" ? "paused" : structure,
    key: keys[structure],
    cutoff: context.clock() - grace,
    limit,
    emit: true,
    listIds: true,
  });
  return ids;
}

/**
 * BullMQ's `drain(delayed)`: deletes every job in wait (and the legacy paused list) and prioritized,
 * and in delayed when asked, but a job scheduler's current iteration; no events. Returns the count.
 */
export async function drain(context: QueueContext, delayed: boolean): Promise<number> {
  new Checker(checkerName(context, "drain")).boolean("delayed", delayed);
  const keys = queueKeys(context.prefix, context.queueName);
  const structures: ("wait" | "legacyPaused" | "delayed" | "prioritized")[] = [
    "wait",
    "legacyPaused",
    ...(delayed ? ["delayed" as const] : []),
    "prioritized",
  ];
  let total = 0;
  for (const structure of structures) {
    const { count } = await cleanStructure(context, {
      state: structure === "legacyPaused" ? "paused" : structure,
      key: keys[structure],
      cutoff: "",
      limit: 0,
      emit: false,
      listIds: false,
    });
    total += count;
  }
  return total;
}

function stepCount(check: Checker, value: unknown): number {
  return value === undefined ? defaultStepCount : check.integer("count", value, 1, maxStepCount);
}

/**
 * BullMQ's `obliterate({ force, count })`: pauses the queue, then deletes its jobs `count` at a time
 * and finally its own keys (events, meta, counters…). Refused (QueueStateError) while jobs are active,
 * unless `force`.
 */
export async function obliterate(context: QueueContext, opts: ObliterateOptions = {}): Promise<void> {
  const check = new Checker(checkerName(context, "obliterate"));
  check.object("opts", opts, ["force", "count"]);
  const force = opts.force === undefined ? false : check.boolean("force", opts.force);
  const count = stepCount(check, opts.count);
  const { port, prefix, queueName } = context;
  const keys = { ...queueKeys(prefix, queueName), attention: attentionKey(prefix) };
  decodePauseQueue(await runScript(port, pauseQueue, keys, { pause: "1" }));
  const token = crypto.randomUUID();
  for (let step = 0; ; step++) {
    const reply = await runScript(
      port,
      obliterateQueue,
      { meta: keys.meta, replayGuard: guard(context, token, step) },
      {
        prefix: queueKeyPrefix(prefix, queueName),
        count: Math.min(count, callCount.obliterate),
        force: force ? "1" : "",
        guardTtl,
      },
    );
    const answer = decodeObliterateQueue(reply);
    if (answer.form === "refused" && answer.code === obliterateQueueCodes.notPaused)
      throw new QueueStateError(
        `obliterate: queue "${queueName}" was resumed while it was being obliterated`,
      );
    if (answer.form === "refused")
      throw new QueueStateError(
        `obliterate: queue "${queueName}" has active jobs; pass { force: true } to delete them too`,
      );
    if (answer.left === 0) return;
    if (answer.left !== 1)
      throw new UnexpectedReplyError(`obliterate of queue "${queueName}": unexpected reply`);
  }
}

/** Runs moveJobsToWait steps until no job is left or `limit` jobs moved; returns how many moved. */
async function moveAll(
  context: QueueContext,
  state: "failed" | "completed" | "delayed",
  count: number,
  maxScore: string,
  limit: number | undefined,
  source?: string,
): Promise<number> {
  const { port, prefix, queueName } = context;
  const keys = { ...queueKeys(prefix, queueName), attention: attentionKey(prefix) };
  const token = crypto.randomUUID();
  let moved = 0;
  for (let step = 0; limit === undefined || moved < limit; step++) {
    const take = Math.min(count, callCount.move, limit === undefined ? count : limit - moved);
    const reply = await runScript(
      port,
      moveJobsToWait,
      { ...keys, source: source ?? keys[state], replayGuard: guard(context, token, step) },
      { prefix: queueKeyPrefix(prefix, queueName), state, count: take, maxScore, guardTtl },
    );
    const answer = decodeMoveJobsToWait(reply);
    moved += answer.moved;
    if (answer.more !== 1) break;
  }
  return moved;
}

/**
 * BullMQ's `retryJobs({ state, count, timestamp })`: every failed (or completed) job finished at or
 * before `timestamp` goes back to wait (LPUSH, priority ignored as in BullMQ), `count` per step, with
 * a `waiting {prev}` event each. Returns how many jobs moved.
 */
export async function retryJobs(context: QueueContext, opts: RetryJobsOptions = {}): Promise<number> {
  const check = new Checker(checkerName(context, "retryJobs"));
  check.object("opts", opts, ["state", "count", "timestamp", "limit"]);
  const state = opts.state ?? "failed";
  if (state !== "failed" && state !== "completed") check.fail("state", "failed or completed", state);
  const count = stepCount(check, opts.count);
  const timestamp =
    opts.timestamp === undefined ? context.clock() : check.integer("timestamp", opts.timestamp, 0);
  const limit = opts.limit === undefined ? undefined : check.integer("limit", opts.limit, 1);
  return moveAll(context, state, count, String(timestamp), limit);
}

/**
 * BullMQ's `promoteJobs({ count })`: every delayed job goes to wait now (LPUSH, priority ignored and
 * `delay` left as stored, as in BullMQ), `count` per step, with a `waiting {prev: delayed}` event
 * each. Returns how many jobs moved.
 */
export async function promoteJobs(context: QueueContext, opts: PromoteJobsOptions = {}): Promise<number> {
  const check = new Checker(checkerName(context, "promoteJobs"));
  check.object("opts", opts, ["count", "limit"]);
  const count = stepCount(check, opts.count);
  const limit = opts.limit === undefined ? undefined : check.integer("limit", opts.limit, 1);
  const moved = await moveAll(context, "delayed", count, "+inf", limit);
  if (limit !== undefined && moved >= limit) return moved;
  const grouped = groupKeys(queueKeyPrefix(context.prefix, context.queueName)).delayed; // into their groups
  return moved + (await moveAll(context, "delayed", count, "+inf", limit && limit - moved, grouped));
}
