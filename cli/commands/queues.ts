/**
 * `nimbusq queues`: every queue under the prefix with its counts. Queues are found by one SCAN walk
 * of the keyspace (core's port has no scan, so this uses the Upstash client directly) matching the
 * keys a queue has: `<prefix>:<queue>:meta` (pause, settings, BullMQ's Queue), `:id` (the job
 * counter, bumped by adds), `:wait` (a dead-letter queue gets letters without a counter) or `:events`
 * (what stays of a queue whose jobs all went).
 */
import { ValidationError } from "../../core/index.ts";
import { type CliRedis, type Command, integerFlag, type Output } from "../command.ts";
import { cell, table } from "../table.ts";

/** Job types counted, as BullMQ 6's default getJobCounts() (`paused` is meta's flag, not a list). */
const countedTypes = [
  "waiting",
  "prioritized",
  "delayed",
  "active",
  "waiting-children",
  "completed",
  "failed",
] as const;

/** Queues read at once after the scan. */
const parallelReads = 4;

/** `*`, `?`, `[`, `]` and `\` are glob syntax in MATCH; a prefix is matched literally. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}

interface Scan {
  names: string[];
  calls: number;
  complete: boolean;
}

/** The queue's own keys that reveal it. A job id never equals one of them (core refuses such ids). */
const revealing = new Set(["meta", "id", "wait", "events"]);

/**
 * The queue names under `prefix`: one MATCH lets through the revealing keys (and a few others whose
 * last part starts with the same two letters, dropped here), so one walk finds them all.
 */
async function scanQueues(
  redis: CliRedis,
  prefix: string,
  maxCalls: number,
  onCall: (calls: number, found: number) => void,
): Promise<Scan> {
  const head = `${prefix}:`;
  const names = new Set<string>();
  let cursor = "0";
  let calls = 0;
  do {
    if (calls >= maxCalls) return { names: [...names].sort(), calls, complete: false };
    const [next, keys] = await redis.scan(cursor, {
      match: `${globEscape(head)}*:[imwe][deav]*`,
      count: 1000,
    });
    calls += 1;
    cursor = String(next);
    for (const key of keys) {
      if (!key.startsWith(head)) continue;
      const parts = key.slice(head.length).split(":");
      if (parts.length === 2 && revealing.has(parts[1] as string)) names.add(parts[0] as string);
    }
    onCall(calls, names.size);
  } while (cursor !== "0");
  return { names: [...names].sort(), calls, complete: true };
}

interface QueueRow {
  name: string;
  /** With NIMBUSQ_DATABASES: where its keys are, and where the shard map places it when elsewhere. */
  database?: string;
  placedOn?: string;
  paused: boolean;
  counts: Record<(typeof countedTypes)[number], number>;
}

export const queues: Command = {
  name: "queues",
  usage: "queues [--max-scan N]",
  summary: "every queue under the prefix, with its job counts",
  help: `Finds the queues under the prefix with SCAN (COUNT 1000) and reads each one's counts.

Options:
  --max-scan N  stop after N SCAN calls (default 1000, about a million keys looked at)

Cost (billed commands): SCAN walks the whole database, not only the prefix, so about one SCAN per
1,000 keys in it; then per queue one getJobCounts script (1 + 7 billed) and one HGETALL of its meta.`,
  options: { "max-scan": { type: "string" } },
  positionals: { min: 0, max: 0 },
  async run(context, _args, flags): Promise<Output> {
    const maxCalls = integerFlag(flags, "max-scan", 1000, 1);
    // With several databases (NIMBUSQ_DATABASES) each is walked, and a queue is read where its keys
    // were found: a queue the shard map now places elsewhere (a database added before the queue was
    // pinned) shows its real counts, flagged.
    const scans: Scan[] = [];
    const foundOn = new Map<string, string>();
    let done = 0;
    for (const database of context.databases()) {
      const found = await scanQueues(database.redis, context.prefix, maxCalls, (calls, count) => {
        if (calls % 25 === 0)
          context.progress.update(`scanning keys: ${done + calls} SCAN calls, ${count} queues`);
      });
      for (const name of found.names) if (!foundOn.has(name)) foundOn.set(name, database.name);
      scans.push(found);
      done += found.calls;
    }
    const scan: Scan = {
      names: [...foundOn.keys()].sort(),
      calls: done,
      complete: scans.every((s) => s.complete),
    };
    context.progress.done();
    // Keys of a name core refuses (BullMQ allows a few more characters) are listed, not read.
    const opened = scan.names.flatMap((name) => {
      try {
        return [{ queue: context.queue(name, foundOn.get(name)), database: foundOn.get(name) as string }];
      } catch (error) {
        if (error instanceof ValidationError) return [];
        throw error;
      }
    });
    const skipped = scan.names.filter((name) => !opened.some(({ queue }) => queue.name === name));
    const rows: QueueRow[] = [];
    for (let i = 0; i < opened.length; i += parallelReads) {
      const batch = opened.slice(i, i + parallelReads).map(async ({ queue, database }): Promise<QueueRow> => {
        const [counts, paused] = await Promise.all([queue.getJobCounts(...countedTypes), queue.isPaused()]);
        const placed = context.placedOn(queue.name);
        const where =
          database === "" ? {} : { database, ...(placed !== database ? { placedOn: placed } : {}) };
        return { name: queue.name, ...where, paused, counts: counts as QueueRow["counts"] };
      });
      rows.push(...(await Promise.all(batch)));
    }
    const several = context.databases().length > 1;
    const notice = [
      scan.complete
        ? ""
        : `\n(stopped after ${scan.calls} SCAN calls: more queues may exist; raise --max-scan)`,
      skipped.length === 0 ? "" : `\n(not read, names nimbusq refuses: ${skipped.map(cell).join(", ")})`,
      ...rows
        .filter((row) => row.placedOn !== undefined)
        .map(
          (row) =>
            `\n(${cell(row.name)} has its keys on database ${row.database} but the shard map places it on ${row.placedOn}: pin it with NIMBUSQ_QUEUE_DATABASES=${row.name}:${row.database})`,
        ),
    ].join("");
    const text =
      rows.length === 0
        ? `no queues under prefix "${context.prefix}"${notice}`
        : table(
            [
              { header: "QUEUE" },
              ...(several ? [{ header: "DATABASE" }] : []),
              { header: "PAUSED" },
              ...countedTypes.map((type) => ({ header: type.toUpperCase(), align: "right" as const })),
            ],
            rows.map((row) => [
              row.name,
              ...(several ? [row.database ?? ""] : []),
              row.paused ? "yes" : "no",
              ...countedTypes.map((type) => row.counts[type]),
            ]),
          ) + notice;
    return {
      json: {
        prefix: context.prefix,
        queues: rows,
        skipped,
        scan: { calls: scan.calls, complete: scan.complete },
      },
      text,
    };
  },
};
