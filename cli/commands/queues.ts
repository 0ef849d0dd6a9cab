/**
 * `nimbusq queues`: every queue under the prefix with its counts. Queues are found by one SCAN walk
 * of the keyspace (core's port has no scan, so this uses the Upstash client directly) matching the
 * keys a queue has: `<prefix>:<queue>:meta` (pause, settings, BullMQ's Queue), `:id` (the job
 * counter, bumped by adds), `:wait` (a dead-letter queue gets letters without a counter) or `:events`
 * (what stays of a queue whose jobs all went).
 */
import { ValidationError } from "../../core/index.ts";
import { type Command, type Context, integerFlag, type Output } from "../command.ts";
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
  redis: ReturnType<Context["databases"]>[number],
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
    // With several databases (NIMBUSQ_DATABASES), each is walked; a queue is read on the database
    // the shard map gives it.
    const scans: Scan[] = [];
    for (const database of context.databases()) {
      const done = scans.reduce((sum, s) => sum + s.calls, 0);
      scans.push(
        await scanQueues(database, context.prefix, maxCalls, (calls, found) => {
          if (calls % 25 === 0)
            context.progress.update(`scanning keys: ${done + calls} SCAN calls, ${found} queues`);
        }),
      );
    }
    const scan: Scan = {
      names: [...new Set(scans.flatMap((s) => s.names))].sort(),
      calls: scans.reduce((sum, s) => sum + s.calls, 0),
      complete: scans.every((s) => s.complete),
    };
    context.progress.done();
    // Keys of a name core refuses (BullMQ allows a few more characters) are listed, not read.
    const opened = scan.names.flatMap((name) => {
      try {
        return [context.queue(name)];
      } catch (error) {
        if (error instanceof ValidationError) return [];
        throw error;
      }
    });
    const skipped = scan.names.filter((name) => !opened.some((queue) => queue.name === name));
    const rows: QueueRow[] = [];
    for (let i = 0; i < opened.length; i += parallelReads) {
      const batch = opened.slice(i, i + parallelReads).map(async (queue): Promise<QueueRow> => {
        const [counts, paused] = await Promise.all([queue.getJobCounts(...countedTypes), queue.isPaused()]);
        return { name: queue.name, paused, counts: counts as QueueRow["counts"] };
      });
      rows.push(...(await Promise.all(batch)));
    }
    const notice = [
      scan.complete
        ? ""
        : `\n(stopped after ${scan.calls} SCAN calls: more queues may exist; raise --max-scan)`,
      skipped.length === 0 ? "" : `\n(not read, names nimbusq refuses: ${skipped.map(cell).join(", ")})`,
    ].join("");
    const text =
      rows.length === 0
        ? `no queues under prefix "${context.prefix}"${notice}`
        : table(
            [
              { header: "QUEUE" },
              { header: "PAUSED" },
              ...countedTypes.map((type) => ({ header: type.toUpperCase(), align: "right" as const })),
            ],
            rows.map((row) => [
              row.name,
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
