/**
 * Declared-keys mode for scripts flagged `#!lua flags=allow-key-locking` (an Upstash flag Redis 7
 * rejects): Upstash requires every key such a script touches to be in KEYS. This module supplies the
 * Lua check (`keyCheckLua`) that `lua-prelude.ts` puts in front of the script, and recognises the flag.
 *
 * Key positions come from Redis's own `COMMAND` table. Only the commands whose names occur as words in
 * the script are embedded, which keeps the prelude small; a command named only at run time (for example
 * `redis.call(ARGV[1], …)`) is refused as unverifiable.
 */
import type { RespReply } from "./resp-client.ts";

/** Where a command's keys are, in argv positions (0 = the command name). */
export type KeyPosition =
  | { readonly kind: "range"; readonly first: number; readonly last: number; readonly step: number }
  | { readonly kind: "none" }
  /** Has subcommands, looked up as `name|sub`. */
  | { readonly kind: "container" }
  /** `numkeys key…` at argument 1, or `destination numkeys key…` when `destination` is set. */
  | { readonly kind: "numkeys"; readonly destination: boolean }
  /** Keys found by parsing the arguments: not checked, so refused. */
  | { readonly kind: "movable" }
  /** Needs the whole database (Upstash refuses these in flagged scripts). */
  | { readonly kind: "database" };

export type KeyPositions = ReadonlyMap<string, KeyPosition>;

/** Movable-key commands whose keys follow a count, handled exactly. */
const NUMKEYS: Record<string, boolean> = {
  zunionstore: true,
  zinterstore: true,
  zdiffstore: true,
  zunion: false,
  zinter: false,
  zdiff: false,
  sintercard: false,
  zintercard: false,
  lmpop: false,
  zmpop: false,
};
const DATABASE_WIDE = new Set(["flushdb", "flushall", "swapdb"]);

/** The phrase every refusal of the prelude contains, so replies can be told apart and counted. */
export const VIOLATION_MARK = "in Lua scripts when 'allow-key-locking' flag is set";

function integerOf(reply: RespReply | undefined): number {
  return reply?.kind === "integer" ? Number(reply.digits) : 0;
}

function textOf(reply: RespReply | undefined): string {
  if (reply?.kind === "bulk") return reply.bytes.toString("utf8").toLowerCase();
  if (reply?.kind === "status") return reply.text.toLowerCase();
  return "";
}

function addEntry(positions: Map<string, KeyPosition>, entry: RespReply): void {
  if (entry.kind !== "array") return;
  const [nameReply, , flagsReply, first, last, step] = entry.items;
  const name = textOf(nameReply);
  if (!/^[a-z0-9_|-]+$/.test(name)) return;
  const flags = flagsReply?.kind === "array" ? flagsReply.items.map(textOf) : [];
  const subcommands = entry.items[9];
  let position: KeyPosition;
  if (DATABASE_WIDE.has(name)) position = { kind: "database" };
  else if (name in NUMKEYS) position = { kind: "numkeys", destination: NUMKEYS[name] === true };
  else if (flags.includes("movablekeys")) position = { kind: "movable" };
  else if (subcommands?.kind === "array" && subcommands.items.length > 0) position = { kind: "container" };
  else if (integerOf(first) > 0) {
    position = { kind: "range", first: integerOf(first), last: integerOf(last), step: integerOf(step) || 1 };
  } else position = { kind: "none" };
  positions.set(name, position);
  if (subcommands?.kind === "array") for (const sub of subcommands.items) addEntry(positions, sub);
}

/** Parses the reply of `COMMAND` (Redis 7 shape; Redis 6's shorter entries work too, minus subcommands). */
export function parseCommandTable(reply: RespReply): KeyPositions {
  if (reply.kind !== "array") throw new Error(`COMMAND answered ${reply.kind}, expected an array`);
  const positions = new Map<string, KeyPosition>();
  for (const entry of reply.items) addEntry(positions, entry);
  return positions;
}

function luaEntry(position: KeyPosition): string {
  switch (position.kind) {
    case "range":
      // The two common shapes are plain numbers, so the table built per call holds few sub-tables.
      if (position.first === 1 && position.step === 1 && (position.last === 1 || position.last === -1)) {
        return String(position.last);
      }
      return `{${position.first},${position.last},${position.step}}`;
    case "none":
      return "0";
    case "container":
      return '"c"';
    case "numkeys":
      return position.destination ? '"d"' : '"n"';
    case "movable":
      return '"m"';
    case "database":
      return '"x"';
  }
}

/** The positions of the commands (and subcommands) named anywhere in `source`, as a Lua table literal. */
export function positionsTable(source: string, positions: KeyPositions): string {
  const words = new Set(source.toLowerCase().match(/[a-z_][a-z0-9_-]*/g) ?? []);
  const entries: string[] = [];
  for (const [name, position] of positions) {
    const [command, sub] = name.split("|");
    if (command === undefined || !words.has(command) || (sub !== undefined && !words.has(sub))) continue;
    entries.push(`["${name}"]=${luaEntry(position)}`);
  }
  return `{${entries.join(",")}}`;
}

/**
 * The declared-keys check as Lua, for the prelude of `lua-prelude.ts`: defines `kchk(name, ...)`, which
 * returns an error text when a key argument of the call is not in KEYS (`K`), or nil. `table` is the
 * literal from `positionsTable`.
 */
export function keyCheckLua(table: string): string {
  return [
    `local P = ${table}`,
    "local D = {} for i = 1, #K do D[K[i]] = true end",
    `local M = " ${VIOLATION_MARK}"`,
    "local function bad(k)",
    "if type(k) == 'number' then k = tostring(k) end",
    "if type(k) ~= 'string' or D[k] then return nil end",
    "return 'ERR Dynamic keys are not allowed' .. M .. '. Key was: ' .. k end",
    "local function kchk(n, ...)",
    "if type(n) ~= 'string' then return nil end",
    "local name = string.lower(n) local p = P[name]",
    "if p == 'c' then local s = ... if type(s) ~= 'string' then return nil end",
    "name = name .. '|' .. string.lower(s) p = P[name] end",
    "if p == 0 then return nil end",
    "if p == 'x' then return 'ERR ' .. string.upper(name) .. ' is not allowed' .. M end",
    "if p == nil or p == 'm' then return 'ERR cannot verify keys of ' .. string.upper(name) .. M",
    ".. ' (the local REST server knows no fixed key positions for it)' end",
    "local c = select('#', ...) local f, l, s",
    "if p == 'n' or p == 'd' then local at = 1",
    "if p == 'd' then local e = bad((...)) if e then return e end at = 2 end",
    "local nk = tonumber((select(at, ...))) if not nk then return nil end",
    "f, l, s = at + 1, at + nk, 1",
    "elseif p == 1 then f, l, s = 1, 1, 1 elseif p == -1 then f, l, s = 1, c, 1",
    "else f, l, s = p[1], p[2], p[3] if l < 0 then l = c + 1 + l end end",
    "if l > c then l = c end",
    "if f == l then return bad((select(f, ...))) end",
    "local a = {...} for i = f, l, s do local e = bad(a[i]) if e then return e end end",
    "return nil end",
  ].join(" ");
}

/** A flagged script's first line, split into the shebang and what follows it. */
export interface Shebang {
  readonly line: string;
  readonly rest: string;
  /** The shebang's flags other than allow-key-locking, in order. */
  readonly otherFlags: readonly string[];
}

/** Null unless `source` starts with a `#!lua` shebang whose flags include allow-key-locking. */
export function flaggedShebang(source: string): Shebang | null {
  if (!source.startsWith("#!lua")) return null;
  const end = source.indexOf("\n");
  const line = end < 0 ? source : source.slice(0, end);
  const rest = end < 0 ? "" : source.slice(end);
  const words = line.replace(/\r$/, "").split(/\s+/);
  if (words[0] !== "#!lua") return null;
  const flags = words.find((word) => word.startsWith("flags="));
  if (!flags) return null;
  const list = flags.slice("flags=".length).split(",");
  if (!list.includes("allow-key-locking")) return null;
  return { line, rest, otherFlags: list.filter((flag) => flag !== "allow-key-locking" && flag !== "") };
}
