/**
 * Reading a queue's events stream (`{P}events`) without a blocking command: one XRANGE per poll from
 * an exclusive cursor, decoded into BullMQ 6.7.0's QueueEvents payloads, and the adaptive poll interval.
 */
import { UnexpectedReplyError } from "../errors.ts";
import type { RedisPort, StreamEntry } from "../redis/redis-port.ts";

/** A stream id as Redis writes it (`<ms>-<seq>`), or the shorter `<ms>` form BullMQ also accepts. */
const streamIdPattern = /^\d{1,20}(-\d{1,20})?$/;

/** True for `$` or a stream id; what `lastEventId` accepts. */
export function isEventId(id: string): boolean {
  return id === "$" || streamIdPattern.test(id);
}

/** `<ms>` as `<ms>-0`: XREAD reads an incomplete id that way, and the cursor is then always complete. */
export function completeEventId(id: string): string {
  return id.includes("-") ? id : `${id}-0`;
}

type StreamPort = Required<Pick<RedisPort, "xrange" | "xrevrange">>;

/** The port's stream reads, or undefined when the client cannot read streams. */
export function streamPort(port: RedisPort): StreamPort | undefined {
  const { xrange, xrevrange } = port;
  if (!xrange || !xrevrange) return undefined;
  return {
    xrange: (key, start, end, count) => xrange.call(port, key, start, end, count),
    xrevrange: (key, end, start, count) => xrevrange.call(port, key, end, start, count),
  };
}

/**
 * The id of the newest entry, what `$` stands for (one XREVRANGE). `0-0` when the stream is empty or
 * missing: every entry written later has a greater id.
 */
export async function newestEventId(port: StreamPort, key: string): Promise<string> {
  const [newest] = await port.xrevrange(key, "+", "-", 1);
  return newest ? newest[0] : "0-0";
}

/**
 * Up to `count` entries after `cursor` (one XRANGE). Entries trimmed away are simply absent: a cursor
 * older than the oldest entry reads from the oldest one, and nothing is read twice.
 */
export async function readEventsAfter(
  port: StreamPort,
  key: string,
  cursor: string,
  count: number,
): Promise<StreamEntry[]> {
  const entries = await port.xrange(key, `(${cursor}`, "+", count);
  for (const [id] of entries) {
    if (!streamIdPattern.test(id) || compareEventIds(id, cursor) <= 0)
      throw new UnexpectedReplyError(`events stream "${key}": XRANGE after ${cursor} answered id "${id}"`);
  }
  return entries;
}

/** Orders two complete stream ids (their parts can exceed 2^53, so they are compared as BigInts). */
export function compareEventIds(a: string, b: string): number {
  const [aMs = "0", aSeq = "0"] = a.split("-");
  const [bMs = "0", bSeq = "0"] = b.split("-");
  const ms = BigInt(aMs) - BigInt(bMs);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(aSeq) - BigInt(bSeq);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

/** One decoded entry: the event's name and the arguments BullMQ's QueueEvents passes its listeners. */
export interface DecodedEvent {
  event: string;
  args: Record<string, unknown>;
}

/** JSON.parse, or the text itself when it is not JSON (BullMQ would stop reading the stream there). */
function parseOrRaw(text: unknown): unknown {
  if (typeof text !== "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * An entry's fields as BullMQ 6.7.0's QueueEvents decodes them: a later duplicate field wins, `progress`
 * `data` and `completed` `returnvalue` are JSON-parsed, `delayed` `delay` becomes a number, and every
 * other value stays a string (`cleaned` `count`, `retries-exhausted` `attemptsMade`). Undefined for an
 * entry with no `event` field.
 */
export function decodeEvent(fields: readonly string[]): DecodedEvent | undefined {
  const args: Record<string, unknown> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) args[fields[i] as string] = fields[i + 1];
  const event = args.event;
  if (typeof event !== "string") return undefined;
  delete args.event;
  if (event === "progress" && "data" in args) args.data = parseOrRaw(args.data);
  else if (event === "completed" && "returnvalue" in args) args.returnvalue = parseOrRaw(args.returnvalue);
  else if (event === "delayed" && "delay" in args) args.delay = Number(args.delay);
  return { event, args };
}

/**
 * The adaptive interval's bounds: `minMs` while events flow, growing to `maxMs` while idle, and on to
 * `idleMs` when nobody waits for a job to finish.
 */
export interface PollBounds {
  minMs: number;
  maxMs: number;
  idleMs: number;
}

/**
 * How long to wait before the next read: none after a full page (more is waiting), `minMs` after a
 * read that found events, and after an empty read twice the previous wait, up to `maxMs` while a
 * `waitUntilFinished` is pending (its latency stays within `maxMs`), else up to `idleMs` — so an idle
 * reader costs one command per `idleMs`.
 */
export function nextPollDelay(
  previousMs: number,
  found: number,
  pageSize: number,
  bounds: PollBounds,
  waiting = false,
): number {
  if (found >= pageSize) return 0;
  if (found > 0) return bounds.minMs;
  const cap = waiting ? bounds.maxMs : Math.max(bounds.maxMs, bounds.idleMs);
  return Math.min(cap, Math.max(bounds.minMs, previousMs * 2));
}
