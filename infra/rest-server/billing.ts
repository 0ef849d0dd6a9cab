/**
 * Counts what Upstash would bill: every top-level command, plus every `redis.call`/`redis.pcall` that a
 * script or function runs. The inner calls are invisible over RESP, so they are measured by diffing
 * `INFO commandstats` (which in Redis 7 counts commands called from Lua) around each request that
 * contains a script, then subtracting what this server sent itself.
 *
 * Exactness assumes this REST server is the only client of its redis-server: a script-bearing request
 * holds an exclusive lock while every other request holds a shared one, so no request of ours runs
 * during the measurement window, but a foreign client's commands would be billed to the script. In
 * cluster mode the counts of every master are summed.
 */
import { SCRIPT_COMMANDS } from "./command-policy.ts";
import type { Command } from "./command-request.ts";
import type { RedisAddress } from "./execute.ts";
import { RespConnection, type RespReply } from "./resp-client.ts";
import { RwLock } from "./rw-lock.ts";

export interface RestStats {
  /** HTTP requests to `/`, `/pipeline` and `/multi-exec` (admin routes are not counted). */
  requests: number;
  /** Top-level commands sent to Redis. */
  commands: number;
  /** `redis.call`/`redis.pcall` run inside EVAL/EVALSHA(_RO) and FCALL(_RO). */
  scriptCalls: number;
  /** `commands + scriptCalls`: how Upstash bills. */
  billed: number;
  /** Runs of scripts flagged `allow-key-locking` that Redis executed. */
  keyLockingCalls: number;
  /**
   * Runs of scripts without `allow-key-locking`: Upstash runs them under its global lock, and only they
   * may touch keys not in KEYS (read from disk under that lock) — the script calls that can reach
   * undeclared keys. EVAL and EVALSHA that ran (not NOSCRIPT).
   */
  globalLockCalls: number;
  /**
   * Declared-keys refusals (undeclared key, unverifiable or database-wide command) found in the replies
   * of flagged scripts, nested ones included; a refusal a script swallows with `pcall` is not seen.
   */
  keyViolations: number;
  /**
   * Upstash-mode refusals of Redis 7.0-only forms: plain commands refused, plus those found in script
   * replies (nested ones included; one swallowed by the script's own `pcall` is not seen).
   */
  upstashRefusals: number;
  /** Top-level commands by lower-case name. */
  byCommand: Record<string, number>;
}

type CallCounts = Map<string, number>;

/**
 * Sums `calls` and `rejected_calls` per command family: "script|load" and "script|exists" both count
 * as "script", which is the name the request itself carries.
 */
export function parseCommandStats(info: string): CallCounts {
  const counts: CallCounts = new Map();
  for (const line of info.split("\r\n")) {
    const match = /^cmdstat_([^|:]+)[^:]*:(.*)$/.exec(line);
    if (!match?.[1] || match[2] === undefined) continue;
    let total = 0;
    for (const field of match[2].split(",")) {
      const [key, value] = field.split("=");
      if (key === "calls" || key === "rejected_calls") total += Number(value) || 0;
    }
    counts.set(match[1], (counts.get(match[1]) ?? 0) + total);
  }
  return counts;
}

/** Inner calls: what Redis counted beyond the commands we sent, per family and never below zero. */
export function innerCalls(before: CallCounts, after: CallCounts, sent: readonly string[]): number {
  const sentCounts: CallCounts = new Map();
  for (const name of sent) sentCounts.set(name, (sentCounts.get(name) ?? 0) + 1);
  let total = 0;
  for (const [family, count] of after) {
    const extra = count - (before.get(family) ?? 0) - (sentCounts.get(family) ?? 0);
    if (extra > 0) total += extra;
  }
  return total;
}

export class UsageMeter {
  private requests = 0;
  private commands = 0;
  private scriptCalls = 0;
  private keyLockingCalls = 0;
  private globalLockCalls = 0;
  private keyViolations = 0;
  private upstashRefusals = 0;
  private byCommand = new Map<string, number>();
  private readonly lock = new RwLock();
  /** One connection per node, by `host:port` (a cluster's commands are counted on every master). */
  private readonly statsConnections = new Map<string, RespConnection>();

  constructor(
    private readonly nodes: () => readonly RedisAddress[],
    private readonly countScriptCalls: boolean,
  ) {}

  countRequest(): void {
    this.requests += 1;
  }

  /** Counts what `ScriptRewrites.settle` found in one request's replies. */
  countScripts(found: { calls: number; unflagged: number; violations: number; refusals: number }): void {
    this.keyLockingCalls += found.calls;
    this.globalLockCalls += found.unflagged;
    this.keyViolations += found.violations;
    this.upstashRefusals += found.refusals;
  }

  countUpstashRefusals(refused: number): void {
    this.upstashRefusals += refused;
  }

  /**
   * Bills `commands` and runs `execute`, which sends them to Redis plus the unbilled `wrappers` (such
   * as MULTI/EXEC, or a retried EVAL). `wrappers` is read once `execute` is done, so it may add to it.
   */
  async run<T>(
    commands: readonly Command[],
    wrappers: readonly string[],
    execute: () => Promise<T>,
  ): Promise<T> {
    for (const command of commands) {
      this.commands += 1;
      this.byCommand.set(command.name, (this.byCommand.get(command.name) ?? 0) + 1);
    }
    if (!this.countScriptCalls) return await execute();
    if (!commands.some((command) => SCRIPT_COMMANDS.has(command.name))) {
      return await this.lock.withShared(execute);
    }
    return await this.lock.withExclusive(async () => {
      const before = await this.snapshot();
      try {
        return await execute();
      } finally {
        await this.measure(before, [...commands.map((command) => command.name), ...wrappers]);
      }
    });
  }

  private async measure(before: CallCounts, sent: readonly string[]): Promise<void> {
    try {
      const after = await this.snapshot();
      // The INFOs that took `before` (one per node) are counted in `after`; those that took `after` are not.
      const infos = this.nodes().map(() => "info");
      this.scriptCalls += innerCalls(before, after, [...sent, ...infos]);
    } catch (error) {
      // The response must not fail for bookkeeping; the count is only off for this request.
      process.stderr.write(`rest-server: could not measure script calls: ${String(error)}\n`);
    }
  }

  private async snapshot(): Promise<CallCounts> {
    const total: CallCounts = new Map();
    for (const node of this.nodes()) {
      const address = `${node.host}:${node.port}`;
      let connection = this.statsConnections.get(address);
      if (!connection?.healthy) {
        connection = await RespConnection.open(node.host, node.port);
        this.statsConnections.set(address, connection);
      }
      const reply: RespReply = await connection.call("INFO", "commandstats");
      if (reply.kind !== "bulk") throw new Error(`INFO commandstats answered ${reply.kind}`);
      for (const [family, count] of parseCommandStats(reply.bytes.toString("utf8"))) {
        total.set(family, (total.get(family) ?? 0) + count);
      }
    }
    return total;
  }

  stats(): RestStats {
    return {
      requests: this.requests,
      commands: this.commands,
      scriptCalls: this.scriptCalls,
      billed: this.commands + this.scriptCalls,
      keyLockingCalls: this.keyLockingCalls,
      globalLockCalls: this.globalLockCalls,
      keyViolations: this.keyViolations,
      upstashRefusals: this.upstashRefusals,
      byCommand: Object.fromEntries(this.byCommand),
    };
  }

  reset(): void {
    this.requests = 0;
    this.commands = 0;
    this.scriptCalls = 0;
    this.keyLockingCalls = 0;
    this.globalLockCalls = 0;
    this.keyViolations = 0;
    this.upstashRefusals = 0;
    this.byCommand = new Map();
  }

  close(): void {
    for (const connection of this.statsConnections.values()) connection.close();
  }
}
