/**
 * Upstash mode: Upstash promises Redis 6.2's commands, while the backend here is a redis-server 7.0
 * that accepts more. This module holds the one table of the 7.0-only forms the REST server refuses,
 * both as plain commands (checked here) and inside Lua scripts (the same table, embedded in the prelude
 * of `lua-prelude.ts`). A refusal reads like Redis 6.2's own answer (`ERR unknown command…`, `ERR syntax
 * error…`) followed by why, and always contains `REDIS62_MARK`.
 *
 * Sources: the "history" of each command in Redis's command docs (`src/commands/*.json`). When unsure
 * whether 6.2 had a form, it is left allowed.
 */
import type { Command } from "./command-request.ts";

/** How a rule recognises the 7.0-only form, with argv positions (0 = the command name). */
export type Redis62Check =
  /** The command (or `command|subcommand`) itself is new in 7.0. */
  | { readonly kind: "new" }
  /** Redis 6.2 took at most `max` argv entries, the name counted. */
  | { readonly kind: "max-args"; readonly max: number }
  /** Every one of `words` (upper case, compared case-insensitively) occurs at argv index `from` or later. */
  | { readonly kind: "words"; readonly from: number; readonly words: readonly string[] }
  /** XADD with an id of the form `<ms>-*`, after the optional NOMKSTREAM / MAXLEN / MINID / LIMIT. */
  | { readonly kind: "xadd-id" };

export interface Redis62Rule {
  /** Lower-case command name, or `command|subcommand`. */
  readonly command: string;
  readonly check: Redis62Check;
  /** The refused form, for the error text. */
  readonly form: string;
}

const NEW: Redis62Check = { kind: "new" };

/**
 * The refused forms. Deliberately allowed, though 7.0 touched them: XADD/XTRIM `LIMIT`, `MINID` and
 * `NOMKSTREAM` (6.2), XAUTOCLAIM (6.2; 7.0 only added deleted ids to its reply), COMMAND INFO without
 * names (6.2 answered an empty array), OBJECT FREQ (4.0), SET `XX` with `GET` (6.2 accepted it), ACL
 * SETUSER selectors and `%R~`/`%W~` patterns (7.0, but not recognised here: unsure of every spelling).
 * The CLUSTER and SHUTDOWN 7.0 forms are not listed: `command-policy.ts` refuses those commands whole.
 */
export const REDIS62_RULES: readonly Redis62Rule[] = [
  // SET history: "7.0.0: Allowed the NX and GET options to be used together" (6.2 answered a syntax error).
  {
    command: "set",
    check: { kind: "words", from: 3, words: ["NX", "GET"] },
    form: "SET with both NX and GET",
  },
  // EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT: "7.0.0: Added options: NX, XX, GT and LT" (6.2: exactly key and time).
  { command: "expire", check: { kind: "max-args", max: 3 }, form: "EXPIRE with NX|XX|GT|LT" },
  { command: "pexpire", check: { kind: "max-args", max: 3 }, form: "PEXPIRE with NX|XX|GT|LT" },
  { command: "expireat", check: { kind: "max-args", max: 3 }, form: "EXPIREAT with NX|XX|GT|LT" },
  { command: "pexpireat", check: { kind: "max-args", max: 3 }, form: "PEXPIREAT with NX|XX|GT|LT" },
  // BITCOUNT: "7.0.0: Added the BYTE|BIT option" (6.2: key [start end]).
  { command: "bitcount", check: { kind: "max-args", max: 4 }, form: "BITCOUNT with BYTE|BIT" },
  // BITPOS: "7.0.0: Added the BYTE|BIT option" (6.2: key bit [start [end]]).
  { command: "bitpos", check: { kind: "max-args", max: 5 }, form: "BITPOS with BYTE|BIT" },
  // XADD: "7.0.0: Added support for the <ms>-* explicit ID form".
  { command: "xadd", check: { kind: "xadd-id" }, form: "XADD with an <ms>-* id" },
  // XSETID: "7.0.0: Added the entries_added and max_deleted_entry_id arguments".
  { command: "xsetid", check: { kind: "max-args", max: 3 }, form: "XSETID with ENTRIESADDED|MAXDELETEDID" },
  // XGROUP CREATE and XGROUP SETID: "7.0.0: Added the entries_read named argument".
  {
    command: "xgroup|create",
    check: { kind: "words", from: 5, words: ["ENTRIESREAD"] },
    form: "XGROUP CREATE with ENTRIESREAD",
  },
  {
    command: "xgroup|setid",
    check: { kind: "words", from: 5, words: ["ENTRIESREAD"] },
    form: "XGROUP SETID with ENTRIESREAD",
  },
  // CONFIG GET: "7.0.0: Added the ability to pass multiple pattern parameters in one call".
  { command: "config|get", check: { kind: "max-args", max: 3 }, form: "CONFIG GET with several patterns" },
  // CONFIG SET: "7.0.0: Added the ability to set multiple parameters in one call".
  { command: "config|set", check: { kind: "max-args", max: 4 }, form: "CONFIG SET with several parameters" },
  // INFO: "7.0.0: Added support for taking multiple section arguments".
  { command: "info", check: { kind: "max-args", max: 2 }, form: "INFO with several sections" },
  // Commands added in 7.0.0 (each one's "since").
  { command: "lmpop", check: NEW, form: "LMPOP" }, // pops from the first non-empty of several lists
  { command: "blmpop", check: NEW, form: "BLMPOP" }, // blocking LMPOP (also refused as blocking)
  { command: "zmpop", check: NEW, form: "ZMPOP" }, // pops from the first non-empty of several sorted sets
  { command: "bzmpop", check: NEW, form: "BZMPOP" }, // blocking ZMPOP (also refused as blocking)
  { command: "sintercard", check: NEW, form: "SINTERCARD" }, // size of a set intersection
  { command: "zintercard", check: NEW, form: "ZINTERCARD" }, // size of a sorted-set intersection
  { command: "expiretime", check: NEW, form: "EXPIRETIME" }, // absolute expiry in seconds
  { command: "pexpiretime", check: NEW, form: "PEXPIRETIME" }, // absolute expiry in milliseconds
  { command: "lcs", check: NEW, form: "LCS" }, // replaces 6.x's STRALGO LCS
  { command: "sort_ro", check: NEW, form: "SORT_RO" }, // read-only SORT
  { command: "eval_ro", check: NEW, form: "EVAL_RO" }, // read-only EVAL
  { command: "evalsha_ro", check: NEW, form: "EVALSHA_RO" }, // read-only EVALSHA
  { command: "fcall", check: NEW, form: "FCALL" }, // Redis Functions
  { command: "fcall_ro", check: NEW, form: "FCALL_RO" }, // Redis Functions, read-only
  { command: "function", check: NEW, form: "FUNCTION" }, // every FUNCTION subcommand
  { command: "spublish", check: NEW, form: "SPUBLISH" }, // sharded pub/sub
  { command: "ssubscribe", check: NEW, form: "SSUBSCRIBE" }, // sharded pub/sub (also refused as stateful)
  { command: "sunsubscribe", check: NEW, form: "SUNSUBSCRIBE" }, // sharded pub/sub (also refused as stateful)
  // Subcommands added in 7.0.0.
  { command: "pubsub|shardchannels", check: NEW, form: "PUBSUB SHARDCHANNELS" }, // sharded pub/sub
  { command: "pubsub|shardnumsub", check: NEW, form: "PUBSUB SHARDNUMSUB" }, // sharded pub/sub
  { command: "client|no-evict", check: NEW, form: "CLIENT NO-EVICT" }, // (CLIENT is refused whole anyway)
  { command: "command|docs", check: NEW, form: "COMMAND DOCS" }, // command documentation
  { command: "command|list", check: NEW, form: "COMMAND LIST" }, // command names, filterable
  { command: "command|getkeysandflags", check: NEW, form: "COMMAND GETKEYSANDFLAGS" }, // keys with flags
  { command: "latency|histogram", check: NEW, form: "LATENCY HISTOGRAM" }, // per-command latency
  { command: "acl|dryrun", check: NEW, form: "ACL DRYRUN" }, // permission simulation
  { command: "module|loadex", check: NEW, form: "MODULE LOADEX" }, // module loading with CONFIG args
];

/** Every refusal contains this, so replies holding one can be told apart and counted. */
export const REDIS62_MARK = "Upstash promises Redis 6.2";
const WHY = ` (${REDIS62_MARK}; refused by the local REST server's Upstash mode)`;

/** The error text for `rule`, shaped like Redis 6.2's answer to that form. */
export function refusalText(rule: Redis62Rule): string {
  if (rule.check.kind !== "new") return `ERR syntax error: ${rule.form} is a Redis 7.0 form${WHY}`;
  const [command, sub] = rule.command.split("|");
  if (sub === undefined) return `ERR unknown command '${rule.form}', a Redis 7.0 command${WHY}`;
  return `ERR unknown subcommand '${sub.toUpperCase()}' of ${command?.toUpperCase()}, added in Redis 7.0${WHY}`;
}

const BY_COMMAND = new Map(REDIS62_RULES.map((rule) => [rule.command, rule]));
/** Commands with rules only for some subcommands. */
export const REDIS62_CONTAINERS: ReadonlySet<string> = new Set(
  REDIS62_RULES.filter((rule) => rule.command.includes("|")).map((rule) => rule.command.split("|")[0] ?? ""),
);

/** Where XADD's id is: after the key and the optional NOMKSTREAM and MAXLEN|MINID [=|~] n [LIMIT n]. */
function xaddIdIndex(args: readonly string[]): number {
  let index = 2;
  while (index < args.length) {
    const word = args[index]?.toUpperCase();
    if (word === "NOMKSTREAM") index += 1;
    else if (word === "MAXLEN" || word === "MINID") {
      index += 1;
      if (args[index] === "=" || args[index] === "~") index += 1;
      index += 1;
      if (args[index]?.toUpperCase() === "LIMIT") index += 2;
    } else break;
  }
  return index;
}

function matches(check: Redis62Check, args: readonly string[]): boolean {
  switch (check.kind) {
    case "new":
      return true;
    case "max-args":
      return args.length > check.max;
    case "words": {
      const present = new Set(args.slice(check.from).map((arg) => arg.toUpperCase()));
      return check.words.every((word) => present.has(word));
    }
    case "xadd-id":
      return /^\d+-\*$/.test(args[xaddIdIndex(args)] ?? "");
  }
}

/** The refusal for a command's argv (name first), or null when Redis 6.2 had that form. */
export function redis62Refusal(args: readonly string[]): string | null {
  const name = args[0]?.toLowerCase() ?? "";
  let rule = BY_COMMAND.get(name);
  if (!rule && REDIS62_CONTAINERS.has(name) && args[1] !== undefined) {
    rule = BY_COMMAND.get(`${name}|${args[1].toLowerCase()}`);
  }
  return rule && matches(rule.check, args) ? refusalText(rule) : null;
}

const upstashShebangFlags = new Set([
  "flags=allow-key-locking",
  "flags=no-writes,allow-key-locking",
  "flags=allow-key-locking,no-writes",
]);

/**
 * A script's shebang: Redis 6.2 had none; Upstash documents `#!lua flags=allow-key-locking` and, for
 * read-only scripts, `#!lua flags=no-writes,allow-key-locking`. Any other shebang (`no-writes` alone,
 * `#!lua` alone, other options) is a Redis 7.0 form.
 */
export function shebangRefusal(source: string): string | null {
  if (!source.startsWith("#!")) return null;
  const end = source.indexOf("\n");
  const line = (end < 0 ? source : source.slice(0, end)).replace(/\r$/, "");
  const words = line.split(/\s+/).filter((word) => word !== "");
  const flags = words.length === 2 && words[0] === "#!lua" ? (words[1] as string) : "";
  if (upstashShebangFlags.has(flags)) return null;
  const shown = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  return (
    `ERR Error compiling script: the shebang '${shown}' is a Redis 7.0 form; ` +
    `only Upstash's '#!lua flags=allow-key-locking' (with no-writes for a read-only script) is accepted${WHY}`
  );
}

/** What Upstash mode answers for a plain command (scripts' own calls are checked in Lua), or null. */
export function upstashModeRefusal(command: Command): string | null {
  const refusal = redis62Refusal(command.args);
  if (refusal) return refusal;
  const sub = command.args[1]?.toLowerCase();
  if (command.name === "eval" && command.args[1] !== undefined) return shebangRefusal(command.args[1]);
  if (command.name === "script" && sub === "load" && command.args[2] !== undefined) {
    return shebangRefusal(command.args[2]);
  }
  return null;
}
