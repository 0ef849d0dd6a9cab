/**
 * Turns `lua/*.lua` into `core/redis/generated/scripts.ts`: each script's includes inlined, a prelude of
 * named KEYS/ARGV positions prepended, its SHA-1, typed TypeScript shapes for its KEYS and ARGV, and a
 * typed decoder of its reply, all taken from the contract header; and into
 * `core/redis/generated/codes.ts`: each script's return codes (CODES) as an `as const` object. The
 * output is deterministic, so a test can tell when it is stale.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  argType,
  HeaderError,
  type HeaderItem,
  type HeaderSection,
  parseHeader,
  type ScriptHeader,
} from "./header.ts";
import { replySpec, replyType } from "./reply-type.ts";
import { partConstant, type Segment, segmentsOf } from "./segments.ts";

export const generatedModulePath = "core/redis/generated/scripts.ts";
export const generatedCodesPath = "core/redis/generated/codes.ts";

export interface BuiltScript {
  header: ScriptHeader;
  /** The shebang (if any) and the named-position prelude, before the segments. */
  head: string;
  segments: Segment[];
  source: string;
  sha1: string;
}

function luaTable(name: string, entries: [string, number][]): string {
  return `local ${name} = { ${entries.map(([k, v]) => `${k} = ${v}`).join(", ")} }`;
}

function prelude(header: ScriptHeader): string {
  const lines = [`-- nimbusq:${header.name} (generated from lua/${header.name}.lua; do not edit)`];
  const sections: [HeaderSection, string, string][] = [
    [header.keys, "KEY", "KEYS"],
    [header.argv, "ARG", "ARGV"],
  ];
  for (const [section, name, array] of sections) {
    if (section.fixed.length > 0) {
      lines.push(
        luaTable(
          name,
          section.fixed.map((item, i) => [item.name, i + 1]),
        ),
      );
    }
    if (section.group) {
      const first = section.fixed.length + 1;
      const size = section.group.items.length;
      const offsets = section.group.items.map((item, i): [string, number] => [item.name, i]);
      lines.push(luaTable(`${name}_GROUP`, [["first", first], ["size", size], ...offsets]));
      lines.push(`local ${name}_GROUP_COUNT = (#${array} - ${first - 1}) / ${size}`);
      lines.push(
        `local function ${name === "KEY" ? "groupKey" : "groupArg"}(i, offset) return ${array}[${first} + (i - 1) * ${size} + offset] end`,
      );
    }
  }
  return lines.join("\n");
}

/** A script may open with Upstash's shebang (`#!lua flags=allow-key-locking`); it stays line 1. */
const shebangLine = /^#!lua[^\n]*\n/;

export function buildScript(luaDir: string, fileName: string): BuiltScript {
  const file = readFileSync(join(luaDir, fileName), "utf8");
  const shebang = shebangLine.exec(file)?.[0] ?? "";
  const raw = file.slice(shebang.length);
  const header = parseHeader(fileName, raw);
  if (header.reply.length === 0) throw new HeaderError(`${fileName}: header has no REPLY section`);
  // Upstash runs a script without `allow-key-locking` under its global lock: nothing else runs
  // meanwhile, and (its key-locking page) keys built inside are read from disk under that lock. Such
  // a script says why it cannot declare its keys; a flagged one has nothing to explain.
  const keyLocking = /allow-key-locking/.test(shebang);
  if (!keyLocking && !header.globalLock)
    throw new HeaderError(
      `${fileName}: a script without allow-key-locking needs a GLOBAL LOCK section saying why it cannot declare every key it touches`,
    );
  if (keyLocking && header.globalLock)
    throw new HeaderError(`${fileName}: a script flagged allow-key-locking has no GLOBAL LOCK section`);
  const body = raw.replace(/^--\[\[\n[\s\S]*?\n\]\]\n/, "");
  const head = `${shebang}${prelude(header)}\n`;
  const segments = segmentsOf(luaDir, body);
  const source = head + segments.map((segment) => segment.text).join("");
  checkIntegerTypes(header, source);
  const sha1 = createHash("sha1").update(source).digest("hex");
  return { header, head, segments, source, sha1 };
}

export function buildAllScripts(luaDir: string): BuiltScript[] {
  return readdirSync(luaDir)
    .filter((file) => file.endsWith(".lua"))
    .sort()
    .map((file) => buildScript(luaDir, file));
}

/** The source as a multi-line template literal, so a change to a script reads as lines in a diff. */
function templateLiteral(text: string): string {
  return `\`${text.replaceAll("\\", "\\\\").replaceAll("`", "\\`").replaceAll("${", "\\${")}\``;
}

/** Every include part the scripts use, once each, as a constant. */
function includeConstants(scripts: BuiltScript[]): string[] {
  const parts = new Map<string, string>();
  for (const { header, segments } of scripts) {
    for (const segment of segments) {
      if (segment.kind !== "include") continue;
      const name = partConstant(segment);
      const known = parts.get(name);
      if (known !== undefined && known !== segment.text) {
        throw new Error(
          `${header.name}: include ${segment.name} part ${segment.part} differs between scripts`,
        );
      }
      parts.set(name, segment.text);
    }
  }
  const out = [
    "// Include parts, each once: the scripts' sources below are joined from them and their own code.",
    "",
  ];
  for (const name of [...parts.keys()].sort()) {
    out.push(`const ${name} = ${templateLiteral(parts.get(name) as string)};`, "");
  }
  return out;
}

/** A script's source: its head, then its own code and the include constants, joined when the module loads. */
function sourceExpression({ head, segments }: BuiltScript): string {
  const pieces = [
    templateLiteral(head),
    ...segments.map((segment) =>
      segment.kind === "include" ? partConstant(segment) : templateLiteral(segment.text),
    ),
  ];
  return `/* @__PURE__ */ [\n    ${pieces.join(",\n    ")},\n  ].join("")`;
}

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

function docComment(text: string, indent = ""): string {
  const lines = text.split("\n").map((line) => line.replaceAll("*/", "*\\/"));
  return `${indent}/**\n${lines.map((line) => `${indent} *${line ? ` ${line}` : ""}`).join("\n")}\n${indent} */`;
}

/**
 * The ARGV a script checks with `checkIntegerArgs` (in its own text or an include's): the build
 * refuses a header that does not type them `int`, so the types and the checks cannot drift apart.
 */
export function integerArgs(source: string): Set<string> {
  const names = new Set<string>();
  for (const call of source.matchAll(/checkIntegerArgs\(\s*"[^"]*"\s*,\s*\{([^}]*)\}/g)) {
    for (const name of (call[1] ?? "").matchAll(/"([A-Za-z][A-Za-z0-9]*)"/g)) names.add(name[1] as string);
  }
  return names;
}

/** Refuses a header whose checked-integer arguments are not typed `int`. */
function checkIntegerTypes(header: ScriptHeader, source: string): void {
  const items = [...header.argv.fixed, ...(header.argv.group?.items ?? [])];
  for (const name of integerArgs(source)) {
    const item = items.find((candidate) => candidate.name === name);
    if (item && item.type !== "int") {
      throw new HeaderError(
        `${header.name}.lua: "${name}" is checked with checkIntegerArgs, so its type must be int, not ${item.type}`,
      );
    }
  }
}

/** An interface of a section's fields: the fixed ones typed by `valueType`, a group's items by `groupType`. */
function shape(typeName: string, section: HeaderSection, valueType: (item: HeaderItem) => string): string {
  const field = (item: HeaderItem) =>
    `${item.doc ? `  /** ${item.doc.replaceAll("*/", "*\\/")} */\n` : ""}  ${item.name}: ${valueType(item)};`;
  const parts = section.fixed.map(field);
  let groupType = "";
  if (section.group) {
    const groupName = `${typeName}${pascal(section.group.name)}Item`;
    groupType = `export interface ${groupName} {\n${section.group.items.map(field).join("\n")}\n}\n\n`;
    parts.push(`  ${section.group.name}: readonly ${groupName}[];`);
  }
  if (parts.length === 0) return `export type ${typeName} = Record<string, never>;`;
  return `${groupType}export interface ${typeName} {\n${parts.join("\n")}\n}`;
}

/** The KEYS or ARGV layout core/redis/scripts.ts flattens named values by (its ScriptLayout). */
export function layoutOf(section: HeaderSection) {
  const fixed = section.fixed.map((item) => item.name);
  if (!section.group) return { fixed };
  return { fixed, group: { name: section.group.name, fields: section.group.items.map((item) => item.name) } };
}

function layout(section: HeaderSection): string {
  const { fixed, group } = layoutOf(section);
  if (!group) return `{ fixed: ${JSON.stringify(fixed)} }`;
  return `{ fixed: ${JSON.stringify(fixed)}, group: { name: "${group.name}", fields: ${JSON.stringify(group.fields)} } }`;
}

const banner =
  "// GENERATED by infra/lua-build from lua/*.lua. Do not edit: change the Lua and run `npm run build:lua`.";

/** The reply's type and its decoder: `decode<Script>(reply, forms?)`. */
function decoder(header: ScriptHeader): string[] {
  const base = pascal(header.name);
  const type = `${base}Reply`;
  const codeType = header.codes.length > 0 ? `codes.${base}Code` : "never";
  const out = [replyType(type, header.reply, codeType), ""];
  out.push(
    `const ${header.name}Reply: ReplySpec = ${replySpec(header.name, header.reply, header.codes)};`,
    "",
  );
  out.push(
    docComment(
      `Checks ${header.name}'s reply against the REPLY of lua/${header.name}.lua and names its parts;\n` +
        "UnexpectedReplyError (naming what did not fit, never the values) when it fits no form.",
    ),
  );
  if (header.reply.some((form) => form.name)) {
    out.push(
      `export function decode${base}<F extends ${type}["form"] = ${type}["form"]>(`,
      "  reply: unknown,",
      "  forms?: readonly F[],",
      `): Extract<${type}, { form: F }> {`,
      `  return decodeReply(${header.name}Reply, reply, forms) as Extract<${type}, { form: F }>;`,
      "}",
      "",
    );
  } else {
    out.push(
      `export function decode${base}(reply: unknown): ${type} {`,
      `  return decodeReply(${header.name}Reply, reply) as ${type};`,
      "}",
      "",
    );
  }
  return out;
}

export function generateModule(scripts: BuiltScript[]): string {
  const out = [
    banner,
    'import type * as codes from "./codes.ts";',
    'import { decodeReply, type ReplySpec } from "../reply.ts";',
    'import type { ScriptDef } from "../scripts.ts";',
    "",
    'export * from "./codes.ts";',
    "",
  ];
  out.push(...includeConstants(scripts));
  for (const script of scripts) {
    const { header, source, sha1 } = script;
    const base = pascal(header.name);
    out.push(
      shape(`${base}Keys`, header.keys, () => "string"),
      "",
    );
    // Each argument takes what its header line's type says (header.ts's argType).
    out.push(
      shape(`${base}Args`, header.argv, (item) => argType(item.type ?? "") ?? "never"),
      "",
    );
    const returns = header.returns ? `\n\nReturns: ${header.returns}` : "";
    out.push(
      docComment(`${header.purpose}\n\nReply: see decode${base}.${returns}\n\nEvents: ${header.events}`),
    );
    out.push(`export const ${header.name}: ScriptDef<${base}Keys, ${base}Args> = {`);
    out.push(`  name: "${header.name}",`);
    out.push(`  sha1: "${sha1}",`);
    out.push(`  keyLocking: ${/^#!lua[^\n]*allow-key-locking/.test(source)},`);
    out.push(`  keys: ${layout(header.keys)},`);
    out.push(`  argv: ${layout(header.argv)},`);
    out.push(`  source: ${sourceExpression(script)},`);
    out.push("};", "");
    out.push(...decoder(header));
  }
  return out.join("\n");
}

/**
 * Each script's CODES as an `as const` object, and all of them by name in `scriptCodes`: a name means
 * the same number in every script that answers it (core/errors.ts maps the shared ones to errors).
 */
export function generateCodesModule(scripts: BuiltScript[]): string {
  const out = [banner, ""];
  const all = new Map<string, { value: number; doc: string }>();
  const entries = (codes: [string, { value: number; doc: string }][]) =>
    codes.map(
      ([name, { value, doc }]) =>
        `${doc ? `  /** ${doc.replaceAll("*/", "*\\/")} */\n` : ""}  ${name}: ${value},`,
    );
  for (const { header } of scripts) {
    if (header.outcomes.length > 0) {
      out.push(`/** ${header.name}'s positive outcomes (OUTCOMES in lua/${header.name}.lua). */`);
      out.push(`export const ${header.name}Outcomes = {`);
      out.push(...entries(header.outcomes.map((outcome) => [outcome.name, outcome])));
      out.push("} as const;", "");
    }
    if (header.codes.length === 0) continue;
    for (const code of header.codes) {
      const seen = all.get(code.name);
      if (seen && seen.value !== code.value) {
        throw new HeaderError(
          `${header.name}.lua: code ${code.name} is ${code.value} here, ${seen.value} elsewhere`,
        );
      }
      if (seen) seen.doc += `, ${header.name}`;
      else all.set(code.name, { value: code.value, doc: `answered by ${header.name}` });
    }
    const base = pascal(header.name);
    out.push(`/** ${header.name}'s return codes (CODES in lua/${header.name}.lua). */`);
    out.push(`export const ${header.name}Codes = {`);
    out.push(...entries(header.codes.map((code) => [code.name, code])));
    out.push("} as const;", "");
    out.push(`export type ${base}Code = (typeof ${header.name}Codes)[keyof typeof ${header.name}Codes];`, "");
  }
  out.push("/** Every script's codes by name; a name is the same number in every script that answers it. */");
  out.push("export const scriptCodes = {");
  out.push(...entries([...all.entries()].sort(([, a], [, b]) => b.value - a.value)));
  out.push("} as const;", "");
  return out.join("\n");
}
