/**
 * What every command module provides, what it is given, and the usage error that sends exit code 2.
 * A command returns its answer twice: a JSON value for `--json` and a text for people; main.ts prints
 * one of them.
 */
import type { ParseArgsConfig } from "node:util";
import type { createRedis, Queue, TcpRedis } from "../core/index.ts";
import type { Progress } from "./progress.ts";

export type Flags = Record<string, string | boolean | undefined>;

/** The client the CLI works with: Upstash's REST client or Redis over TCP (both SCAN alike). */
export type CliRedis = ReturnType<typeof createRedis> | TcpRedis;

export interface CliDatabase {
  name: string;
  redis: CliRedis;
}

export interface Output {
  json: unknown;
  text: string;
}

/** What a command may use: the prefix, a queue by name, the raw Redis client, progress on stderr. */
export interface Context {
  readonly prefix: string;
  /**
   * A queue under the prefix, on the database the shard map gives it (or on `database`, by name); a
   * bad name throws core's ValidationError (exit 2).
   */
  queue(name: string, database?: string): Queue;
  /**
   * The databases by name ("" for the one database without NIMBUSQ_DATABASES), for the key scan,
   * which core's port does not offer.
   */
  databases(): CliDatabase[];
  /** The database the shard map places a queue on ("" without NIMBUSQ_DATABASES). */
  placedOn(name: string): string;
  readonly progress: Progress;
}

export interface Command {
  name: string;
  /** `jobs <queue> [state] [--start N] [--end N]` */
  usage: string;
  summary: string;
  /** The `--help` text after the usage line: what it does, options, what it costs. */
  help: string;
  /** The command's own flags (the global ones are added by main.ts). */
  options: NonNullable<ParseArgsConfig["options"]>;
  /** How many positionals it takes. */
  positionals: { min: number; max: number };
  run(context: Context, args: string[], flags: Flags): Promise<Output>;
}

/** Bad command line or environment: exit code 2, the message on stderr. */
export class UsageError extends Error {
  override name = "UsageError" as const;
}

/** An integer flag (`--start 10`), its default when absent; anything else is a UsageError. */
export function integerFlag(flags: Flags, name: string, fallback: number, min?: number): number;
export function integerFlag(
  flags: Flags,
  name: string,
  fallback: undefined,
  min?: number,
): number | undefined;
export function integerFlag(
  flags: Flags,
  name: string,
  fallback: number | undefined,
  min = 0,
): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === "string" && /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min)
    throw new UsageError(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

/** A positional that must be one of `allowed`. */
export function oneOf<T extends string>(what: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`${what} must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
  return value as T;
}
