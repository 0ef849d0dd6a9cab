/**
 * How ack entries and id lists travel to the worker scripts: length-prefixed strings (the scripts'
 * decodeIds reads them, counting UTF-8 bytes as Lua does) and entries with only their non-default
 * fields spelled out.
 */

import type { AckEntry } from "../job/ack-entry.ts";
import { encodeIds } from "../redis/codec.ts";

export { encodeIds };

/** AckEntry fields the script assumes when the call leaves them out. */
const entryDefaults: Partial<Record<keyof AckEntry, string>> = {
  stacktrace: "",
  due: "0",
  priority: "0",
  lifo: "",
  keepCount: "-1",
  keepAge: "0",
  keepLimit: "0",
  attempts: "0",
  parentKey: "",
  parentPrefix: "",
  parentPolicy: "",
  dedupId: "",
  deferred: "",
  deadLetter: "",
  group: "",
};
const sentAlways = new Set(["id", "token", "outcome", "value", "attemptsMade"]);

/**
 * An entry as the script's ARGV group takes it: five fields always, the rest (rarely other than their
 * defaults) as one length-prefixed list of name, value pairs — a third of the arguments to encode,
 * send and parse per job.
 */
export function compactEntry(entry: AckEntry) {
  const extra: string[] = [];
  for (const [name, value] of Object.entries(entry)) {
    if (sentAlways.has(name)) continue;
    const text = String(value);
    if (text !== (entryDefaults[name as keyof AckEntry] ?? "")) extra.push(name, text);
  }
  const { id, token, outcome, value, attemptsMade } = entry;
  return { id, token, outcome, value, attemptsMade, extra: encodeIds(extra) };
}
