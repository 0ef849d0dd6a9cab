/**
 * Commands Upstash's REST API cannot run. Refusing them locally keeps code that would only work against
 * a TCP Redis from passing in dev and CI: a blocking pop would hang or busy-loop in production, and
 * connection-state commands (SELECT, CLIENT, MULTI…) would leak state into a pooled connection here.
 */
import type { Command } from "./command-request.ts";

const BLOCKING = new Set([
  "blpop",
  "brpop",
  "brpoplpush",
  "blmove",
  "blmpop",
  "bzpopmin",
  "bzpopmax",
  "bzmpop",
  "wait",
  "waitaof",
]);

/** Connection, transaction, pub/sub, replication and cluster commands: none has a meaning over REST. */
const STATEFUL = new Set([
  "auth",
  "client",
  "hello",
  "quit",
  "reset",
  "select",
  "watch",
  "unwatch",
  "multi",
  "exec",
  "discard",
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
  "monitor",
  "sync",
  "psync",
  "replconf",
  "replicaof",
  "slaveof",
  "failover",
  "shutdown",
  "cluster",
  "asking",
  "readonly",
  "readwrite",
]);

/** Names of the commands that run Lua or functions, whose inner calls Upstash also bills. */
export const SCRIPT_COMMANDS: ReadonlySet<string> = new Set([
  "eval",
  "evalsha",
  "eval_ro",
  "evalsha_ro",
  "fcall",
  "fcall_ro",
]);

function notAvailable(command: string, detail = ""): string {
  return `ERR Command is not available: '${command}'${detail}. See https://docs.upstash.com/overall/rediscompatibility for details`;
}

/**
 * XREAD and XREADGROUP block only with a BLOCK option. Options come before STREAMS, and the values of
 * GROUP and COUNT are skipped so a group or consumer that happens to be called "block" is not mistaken.
 */
function usesBlockOption(args: readonly string[]): boolean {
  for (let index = 1; index < args.length; index++) {
    const word = args[index]?.toLowerCase();
    if (word === "streams") return false;
    if (word === "block") return true;
    if (word === "group") index += 2;
    else if (word === "count") index += 1;
  }
  return false;
}

/** The error Upstash would answer for `command`, or null when the command may run. */
export function rejectionOf(command: Command): string | null {
  const upper = command.name.toUpperCase();
  if (BLOCKING.has(command.name)) return notAvailable(upper);
  if (STATEFUL.has(command.name)) return notAvailable(upper);
  if ((command.name === "xread" || command.name === "xreadgroup") && usesBlockOption(command.args)) {
    return notAvailable(upper, " with BLOCK");
  }
  return null;
}
