/**
 * Redrive: dead letters of one source queue go back to it as new jobs (core/dead-letter/dead-letter.ts). Each page
 * of a dead-letter queue's wait list, then its failed and completed sets, oldest first, is read, and
 * its letters are moved in one atomic, replay-safe script call: a letter leaves the dead-letter queue
 * (`removed`) in the same call that adds its job to the source queue, and a letter another call (or a
 * dead-letter worker) took in between is skipped, so nothing is lost or doubled. Active letters stay.
 *
 * The new job has the original's name, data and options, less what belonged to the original run
 * (custom `jobId`, delay, timestamp, parent, deduplication, scheduler fields): a fresh counter id,
 * fresh attempts, ready at once. The data is re-serialized from the letter (JSON.parse/stringify).
 */

import type { WriteSettings } from "../adds/add-types.ts";
import { encodeOptions, groupIdOf } from "../redis/codec.ts";
import {
  decodeReadDeadLetters,
  decodeRedriveDeadLetters,
  readDeadLetters,
  redriveDeadLetters,
} from "../redis/generated/scripts.ts";
import { attentionKey, queueKeyPrefix, queueKeys, replayGuardKey } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { runScript } from "../redis/scripts.ts";
import type { JobsOptions } from "../types.ts";
import { Checker, checkPrefix, checkQueueName } from "../validate.ts";
import { deadLetterIdPrefix, parseDeadLetter, redriveOptions } from "./dead-letter.ts";

export interface RedriveOptions {
  /** The dead-letter queue (default `<queue>-dlq`, see {@link defaultDeadLetterQueue}). */
  from?: string;
  /** The dead-letter queue's key prefix (default the source queue's). */
  prefix?: string;
  /** Most dead letters moved (default 1000). */
  count?: number;
}

export interface RedriveResult {
  /** How many dead letters became jobs again. */
  count: number;
  /** The new jobs' ids, with the dead letter each came from. */
  jobs: { id: string; deadLetterId: string }[];
  /** `count` was reached: more dead letters may be left. */
  more: boolean;
}

/** The dead-letter queue a redrive reads when none is named: `<queue>-dlq`. */
export const defaultDeadLetterQueue = (queue: string): string => `${queue}-dlq`;

const states = [
  { state: "wait", structure: "wait", kind: "list" },
  { state: "failed", structure: "failed", kind: "zset" },
  { state: "completed", structure: "completed", kind: "zset" },
] as const;

const pageSize = 100;
/** A page stops once its letters' data passes this, keeping each call well under Upstash's 10 MB. */
const maxPageBytes = 4 * 1024 * 1024;

interface Letter {
  id: string;
  /** The id of the failed job the letter was made from, in the source queue. */
  sourceJobId: string;
  name: string;
  data: string;
  opts: string;
  priority: number;
  placement: "wait" | "lifo" | "prioritized";
  /** Its group (opts.group.id), "" for none. */
  group: string;
}

export async function redrive(
  context: QueueContext,
  settings: WriteSettings,
  options: RedriveOptions = {},
): Promise<RedriveResult> {
  const { port, prefix, queueName } = context;
  const check = new Checker(`Queue "${queueName}": redrive`);
  check.object("options", options, ["from", "prefix", "count"]);
  const from = options.from ?? defaultDeadLetterQueue(queueName);
  checkQueueName(from, check.context, "from");
  const deadLetterPrefix = options.prefix === undefined ? prefix : checkPrefix(options.prefix, check.context);
  const count = check.integer("count", options.count ?? 1000, 1);
  if (from === queueName && deadLetterPrefix === prefix)
    check.fail("from", "another queue than this one", from);
  // Read through this queue's port: with a shard map, the letters must be on its database.
  context.shards?.checkSameDatabase(check, "from", queueName, from);
  const idPrefix = deadLetterIdPrefix({ prefix, queue: queueName }, deadLetterPrefix);
  const deadKeys = queueKeys(deadLetterPrefix, from);
  const result: RedriveResult = { count: 0, jobs: [], more: false };
  for (const { state, structure, kind } of states) {
    let offset = 0;
    for (;;) {
      const page = decodeReadDeadLetters(
        await runScript(
          port,
          readDeadLetters,
          { structure: deadKeys[structure] },
          {
            prefix: queueKeyPrefix(deadLetterPrefix, from),
            kind,
            idPrefix,
            offset,
            count: pageSize,
            maxBytes: maxPageBytes,
          },
        ),
      );
      const letters = lettersOf(page.letters);
      const room = count - result.count;
      const taken = letters.slice(0, room);
      const moved =
        taken.length > 0 ? await move(context, settings, state, deadLetterPrefix, from, taken) : [];
      for (const [i, id] of moved.entries()) {
        if (id && id !== supersededMark) result.jobs.push({ id, deadLetterId: (taken[i] as Letter).id });
      }
      result.count = result.jobs.length;
      if (letters.length > room) return { ...result, more: true };
      if (result.count >= count) return { ...result, more: true };
      if (page.ended === 1) break;
      offset += page.looked - moved.filter(Boolean).length;
    }
  }
  return result;
}

/** The letters of a read page this module can redrive; others (not a dead letter's data) stay. */
function lettersOf(read: readonly { id: string; data: string }[]): Letter[] {
  const letters: Letter[] = [];
  for (const { id, data: stored } of read) {
    const letter = parseDeadLetter(stored);
    if (!letter) continue;
    const opts = redriveOptions(letter.job.opts);
    let data: string | undefined;
    try {
      data = JSON.stringify("data" in letter.job ? letter.job.data : {});
    } catch {
      data = undefined;
    }
    if (data === undefined) continue;
    letters.push({
      id,
      sourceJobId: String(letter.job.id),
      name: letter.job.name,
      data,
      opts: encodeOptions(opts),
      priority: opts.priority ?? 0,
      placement: redrivePlacement(opts),
      group: groupIdOf(opts as Record<string, unknown>),
    });
  }
  return letters;
}

/** Where a redriven job goes: its delay and parent are not redriven, so wait, lifo or prioritized. */
function redrivePlacement(opts: JobsOptions): Letter["placement"] {
  if ((opts.priority ?? 0) > 0) return "prioritized";
  return opts.lifo ? "lifo" : "wait";
}

/** A letter dropped, not moved: its job was retried in the source queue since it failed. */
const supersededMark = "-";

/**
 * One atomic move; the new job's id per letter, "" for a letter no longer there, "-" for one dropped
 * because its failed job was retried since (running it again from the letter would do the work twice).
 */
async function move(
  context: QueueContext,
  settings: WriteSettings,
  state: (typeof states)[number]["state"],
  deadLetterPrefix: string,
  from: string,
  letters: Letter[],
): Promise<string[]> {
  const { port, prefix, queueName, clock } = context;
  const keys = queueKeys(prefix, queueName);
  const deadKeys = queueKeys(deadLetterPrefix, from);
  const reply = await runScript(
    port,
    redriveDeadLetters,
    {
      replayGuard: replayGuardKey(prefix, queueName, crypto.randomUUID()),
      attention: attentionKey(prefix),
      idCounter: keys.idCounter,
      wait: keys.wait,
      prioritized: keys.prioritized,
      priorityCounter: keys.priorityCounter,
      delayed: keys.delayed,
      marker: keys.marker,
      events: keys.events,
      waitingChildren: keys.waitingChildren,
      structure: deadKeys[state],
      deadLetterEvents: deadKeys.events,
    },
    {
      prefix: queueKeyPrefix(prefix, queueName),
      deadLetterPrefix: queueKeyPrefix(deadLetterPrefix, from),
      state,
      now: clock(),
      guardTtl: settings.guardTtlMs,
      maxLenEvents: settings.maxLenEvents,
      letters: letters.map((letter) => ({ ...letter, deadLetterId: letter.id })),
    },
  );
  const ids = decodeRedriveDeadLetters(reply).ids.split(",");
  return letters.map((_, i) => ids[i] ?? "");
}
