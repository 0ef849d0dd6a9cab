/**
 * The Redis 7.0-only forms Upstash mode refuses, each with a Redis 6.2 form beside it that must still
 * work, for upstash-mode.test.ts. Keys start with `um:`.
 */

export interface Form {
  readonly name: string;
  /** The 7.0-only form. */
  readonly refused: readonly string[];
  /** A 6.2 form beside it, answered 200 as a plain command and run without error in scripts. */
  readonly allowed: readonly string[] | null;
  /** Keys among the arguments: declared in KEYS for flagged scripts. */
  readonly keys: readonly string[];
  /** Run through a direct connection before each form is tried, so it has something to act on. */
  readonly setup?: readonly (readonly string[])[];
  /** Redis itself refuses the allowed form inside scripts ("not allowed from script"). */
  readonly noScript?: boolean;
  /** Declared-keys mode refuses the allowed form in flagged scripts (its keys are movable). */
  readonly movableKeys?: boolean;
  /** Refused whole by command-policy.ts as a plain command, with Upstash's "not available" text. */
  readonly policy?: boolean;
}

const SET_KEY: readonly (readonly string[])[] = [["SET", "um:e", "1"]];

export const FORMS: readonly Form[] = [
  {
    name: "SET with NX and GET",
    refused: ["SET", "um:set", "v", "NX", "GET"],
    allowed: ["SET", "um:set", "v", "NX", "PX", "1000"],
    keys: ["um:set"],
  },
  {
    name: "SET with GET and NX",
    refused: ["SET", "um:set", "v", "get", "nx"],
    allowed: ["SET", "um:set", "v", "XX", "GET"],
    keys: ["um:set"],
  },
  {
    name: "EXPIRE NX",
    refused: ["EXPIRE", "um:e", "100", "NX"],
    allowed: ["EXPIRE", "um:e", "100"],
    keys: ["um:e"],
    setup: SET_KEY,
  },
  {
    name: "PEXPIRE GT",
    refused: ["PEXPIRE", "um:e", "100000", "GT"],
    allowed: ["PEXPIRE", "um:e", "100000"],
    keys: ["um:e"],
    setup: SET_KEY,
  },
  {
    name: "EXPIREAT XX",
    refused: ["EXPIREAT", "um:e", "4102444800", "XX"],
    allowed: ["EXPIREAT", "um:e", "4102444800"],
    keys: ["um:e"],
    setup: SET_KEY,
  },
  {
    name: "PEXPIREAT LT",
    refused: ["PEXPIREAT", "um:e", "4102444800000", "LT"],
    allowed: ["PEXPIREAT", "um:e", "4102444800000"],
    keys: ["um:e"],
    setup: SET_KEY,
  },
  {
    name: "BITCOUNT BIT",
    refused: ["BITCOUNT", "um:b", "0", "7", "BIT"],
    allowed: ["BITCOUNT", "um:b", "0", "0"],
    keys: ["um:b"],
  },
  {
    name: "BITPOS BYTE",
    refused: ["BITPOS", "um:b", "1", "0", "1", "BYTE"],
    allowed: ["BITPOS", "um:b", "1", "0", "1"],
    keys: ["um:b"],
  },
  {
    name: "XADD <ms>-*",
    refused: ["XADD", "um:x", "MAXLEN", "~", "100", "LIMIT", "10", "9-*", "f", "v"],
    allowed: ["XADD", "um:x", "MAXLEN", "~", "100", "LIMIT", "10", "*", "f", "v"],
    keys: ["um:x"],
  },
  {
    name: "XSETID ENTRIESADDED",
    refused: ["XSETID", "um:xs", "5-0", "ENTRIESADDED", "10", "MAXDELETEDID", "0-0"],
    allowed: ["XSETID", "um:xs", "5-0"],
    keys: ["um:xs"],
    setup: [
      ["DEL", "um:xs"],
      ["XADD", "um:xs", "1-1", "f", "v"],
    ],
  },
  {
    name: "XGROUP CREATE ENTRIESREAD",
    refused: ["XGROUP", "CREATE", "um:xg", "g", "$", "MKSTREAM", "ENTRIESREAD", "0"],
    allowed: ["XGROUP", "CREATE", "um:xg", "g", "$", "MKSTREAM"],
    keys: ["um:xg"],
    setup: [["DEL", "um:xg"]],
  },
  {
    name: "XGROUP SETID ENTRIESREAD",
    refused: ["XGROUP", "SETID", "um:xg2", "g", "0", "ENTRIESREAD", "0"],
    allowed: ["XGROUP", "SETID", "um:xg2", "g", "0"],
    keys: ["um:xg2"],
    setup: [
      ["DEL", "um:xg2"],
      ["XGROUP", "CREATE", "um:xg2", "g", "$", "MKSTREAM"],
    ],
  },
  {
    name: "CONFIG GET of several patterns",
    refused: ["CONFIG", "GET", "maxmemory", "maxclients"],
    allowed: ["CONFIG", "GET", "maxmemory"],
    keys: [],
    noScript: true,
  },
  {
    name: "CONFIG SET of several parameters",
    refused: ["CONFIG", "SET", "maxmemory-samples", "5", "lfu-log-factor", "10"],
    allowed: ["CONFIG", "SET", "maxmemory-samples", "5"],
    keys: [],
    noScript: true,
  },
  {
    name: "INFO of several sections",
    refused: ["INFO", "server", "clients"],
    allowed: ["INFO", "server"],
    keys: [],
  },
  { name: "LMPOP", refused: ["LMPOP", "1", "um:l", "LEFT"], allowed: ["LPOP", "um:l"], keys: ["um:l"] },
  {
    name: "BLMPOP",
    refused: ["BLMPOP", "0", "1", "um:l", "LEFT"],
    allowed: null,
    keys: ["um:l"],
    policy: true,
  },
  { name: "ZMPOP", refused: ["ZMPOP", "1", "um:z", "MIN"], allowed: ["ZPOPMIN", "um:z"], keys: ["um:z"] },
  {
    name: "BZMPOP",
    refused: ["BZMPOP", "0", "1", "um:z", "MIN"],
    allowed: null,
    keys: ["um:z"],
    policy: true,
  },
  {
    name: "SINTERCARD",
    refused: ["SINTERCARD", "2", "um:s1", "um:s2"],
    allowed: ["SINTER", "um:s1", "um:s2"],
    keys: ["um:s1", "um:s2"],
  },
  {
    name: "ZINTERCARD",
    refused: ["ZINTERCARD", "2", "um:z1", "um:z2"],
    allowed: ["ZINTER", "2", "um:z1", "um:z2"],
    keys: ["um:z1", "um:z2"],
  },
  { name: "EXPIRETIME", refused: ["EXPIRETIME", "um:e"], allowed: ["TTL", "um:e"], keys: ["um:e"] },
  { name: "PEXPIRETIME", refused: ["PEXPIRETIME", "um:e"], allowed: ["PTTL", "um:e"], keys: ["um:e"] },
  {
    name: "LCS",
    refused: ["LCS", "um:a", "um:b"],
    allowed: ["MGET", "um:a", "um:b"],
    keys: ["um:a", "um:b"],
  },
  {
    name: "SORT_RO",
    refused: ["SORT_RO", "um:l"],
    allowed: ["SORT", "um:l"],
    keys: ["um:l"],
    movableKeys: true,
  },
  {
    name: "EVAL_RO",
    refused: ["EVAL_RO", "return 1", "0"],
    allowed: ["EVAL", "return 1", "0"],
    keys: [],
    noScript: true,
  },
  {
    name: "EVALSHA_RO",
    refused: ["EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
    allowed: null,
    keys: [],
  },
  { name: "FCALL", refused: ["FCALL", "nofunction", "0"], allowed: null, keys: [] },
  { name: "FCALL_RO", refused: ["FCALL_RO", "nofunction", "0"], allowed: null, keys: [] },
  { name: "FUNCTION", refused: ["FUNCTION", "LIST"], allowed: null, keys: [] },
  { name: "SPUBLISH", refused: ["SPUBLISH", "um:ch", "m"], allowed: ["PUBLISH", "um:ch", "m"], keys: [] },
  { name: "SSUBSCRIBE", refused: ["SSUBSCRIBE", "um:ch"], allowed: null, keys: [], policy: true },
  { name: "SUNSUBSCRIBE", refused: ["SUNSUBSCRIBE", "um:ch"], allowed: null, keys: [], policy: true },
  {
    name: "PUBSUB SHARDCHANNELS",
    refused: ["PUBSUB", "SHARDCHANNELS"],
    allowed: ["PUBSUB", "CHANNELS"],
    keys: [],
  },
  {
    name: "PUBSUB SHARDNUMSUB",
    refused: ["PUBSUB", "shardnumsub", "um:ch"],
    allowed: ["PUBSUB", "NUMSUB", "um:ch"],
    keys: [],
  },
  { name: "CLIENT NO-EVICT", refused: ["CLIENT", "NO-EVICT", "on"], allowed: null, keys: [], policy: true },
  {
    name: "COMMAND DOCS",
    refused: ["COMMAND", "DOCS", "get"],
    allowed: ["COMMAND", "INFO", "get"],
    keys: [],
  },
  { name: "COMMAND LIST", refused: ["COMMAND", "LIST"], allowed: ["COMMAND", "COUNT"], keys: [] },
  {
    name: "COMMAND GETKEYSANDFLAGS",
    refused: ["COMMAND", "GETKEYSANDFLAGS", "GET", "um:k"],
    allowed: ["COMMAND", "GETKEYS", "GET", "um:k"],
    keys: [],
  },
  {
    name: "LATENCY HISTOGRAM",
    refused: ["LATENCY", "HISTOGRAM"],
    allowed: ["LATENCY", "LATEST"],
    keys: [],
    noScript: true,
  },
  {
    name: "ACL DRYRUN",
    refused: ["ACL", "DRYRUN", "default", "GET", "um:k"],
    allowed: ["ACL", "WHOAMI"],
    keys: [],
    noScript: true,
  },
  { name: "MODULE LOADEX", refused: ["MODULE", "LOADEX", "/nonexistent/module.so"], allowed: null, keys: [] },
];

/** Redis 6.2 forms near the refused ones, which must all get through, as plain commands and in scripts. */
export const SIX_TWO_FORMS: readonly (readonly string[])[] = [
  ["SET", "um:ok", "v", "GET"],
  ["SET", "um:ok", "v", "XX", "GET"],
  ["SET", "um:ok", "v", "NX", "PX", "1000"],
  ["SET", "um:ok", "v", "XX", "KEEPTTL", "GET"],
  ["GETEX", "um:ok", "PX", "5000"],
  ["EXPIRE", "um:ok", "50"],
  ["XADD", "um:okx", "NOMKSTREAM", "MINID", "~", "0", "LIMIT", "5", "*", "f", "v"],
  ["XADD", "um:okx", "MAXLEN", "=", "10", "*", "f", "v"],
  ["XADD", "um:okx", "12345-6", "f", "v"],
  ["XTRIM", "um:okx", "MAXLEN", "~", "10", "LIMIT", "5"],
  ["XAUTOCLAIM", "um:okx", "g", "c", "0", "0-0", "COUNT", "1"],
  ["ZADD", "um:okz", "GT", "CH", "1", "m"],
  ["ZRANGE", "um:okz", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "1"],
  ["LPOS", "um:okl", "a", "RANK", "1"],
  ["RPOP", "um:okl", "2"],
  ["BITCOUNT", "um:ok", "0", "-1"],
  ["BITPOS", "um:ok", "0"],
  ["INFO"],
  ["COMMAND", "INFO"],
];

/** A Lua call with the arguments as literals, e.g. `redis.call('SET', 'k', 'v')`. */
export function luaCall(args: readonly string[], fn = "call"): string {
  const literals = args.map((arg) => `'${arg.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`);
  return `redis.${fn}(${literals.join(", ")})`;
}
