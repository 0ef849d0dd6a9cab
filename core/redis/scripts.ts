/**
 * Runs the generated Lua scripts: named KEYS/ARGV objects are flattened in the order the script's
 * header declares, EVALSHA is tried first and EVAL follows only on NOSCRIPT.
 */
import { RedisCallError } from "./call-errors.ts";
import type { RedisPort } from "./redis-port.ts";
import { recordScriptName } from "./script-names.ts";

export interface ScriptLayout {
  readonly fixed: readonly string[];
  readonly group?: { readonly name: string; readonly fields: readonly string[] };
}

/** One generated script. The type parameters tie the named KEYS and ARGV shapes to it. */
export interface ScriptDef<TKeys, TArgs> {
  readonly name: string;
  readonly sha1: string;
  readonly source: string;
  /**
   * The source opens with `#!lua flags=allow-key-locking`: Upstash then locks only the KEYS, and every
   * key the script touches must be one of them.
   */
  readonly keyLocking: boolean;
  readonly keys: ScriptLayout;
  readonly argv: ScriptLayout;
  /** Phantom field: never set, only carries the types. */
  readonly types?: { keys: TKeys; args: TArgs };
}

type Value = string | number;

function toArg(script: string, name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new TypeError(`script ${script}: "${name}" must be a string or a finite number, got ${typeof value}`);
}

/** A script's `flag` argument (lua/README.md): "1" for true, "" for false. */
export function flag(value: boolean | undefined): "1" | "" {
  return value ? "1" : "";
}

export function flatten(script: string, layout: ScriptLayout, values: object): string[] {
  const record = values as Record<string, unknown>;
  const out = layout.fixed.map((name) => toArg(script, name, record[name]));
  if (layout.group) {
    const items = record[layout.group.name];
    if (!Array.isArray(items))
      throw new TypeError(`script ${script}: "${layout.group.name}" must be an array`);
    for (const item of items as Record<string, Value>[]) {
      for (const field of layout.group.fields) out.push(toArg(script, field, item[field]));
    }
  }
  return out;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && /noscript/i.test(error.message);
}

/**
 * Calls a script with EVALSHA, falling back to EVAL when Redis does not have it cached. The keys and
 * arguments are checked against the script's types (never inferred from what the caller passes).
 */
export async function runScript<TKeys extends object, TArgs extends object>(
  port: RedisPort,
  script: ScriptDef<TKeys, TArgs>,
  keys: NoInfer<TKeys>,
  args: NoInfer<TArgs>,
): Promise<unknown> {
  recordScriptName(script.sha1, script.name);
  const flatKeys = flatten(script.name, script.keys, keys);
  const flatArgs = flatten(script.name, script.argv, args);
  try {
    try {
      return await port.evalsha(script.sha1, flatKeys, flatArgs);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return await port.eval(script.source, flatKeys, flatArgs);
    }
  } catch (error) {
    // The message and logs name the script; the port's errors never quote the request.
    if (error instanceof RedisCallError) throw error.forScript(script.name);
    if (error instanceof Error && !("script" in error)) {
      Object.defineProperty(error, "script", { value: script.name, enumerable: false });
    }
    throw error;
  }
}
