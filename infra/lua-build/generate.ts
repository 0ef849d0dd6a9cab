/**
 * Turns `lua/*.lua` into `core/redis/generated/scripts.ts`: each script's includes inlined, a prelude of
 * named KEYS/ARGV positions prepended, its SHA-1, and typed TypeScript shapes for its KEYS and ARGV
 * taken from the contract header. The output is deterministic, so a test can tell when it is stale.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type HeaderSection, parseHeader, type ScriptHeader } from "./header.ts";

export const generatedModulePath = "core/redis/generated/scripts.ts";

const includeDirective = /^-- @include ([A-Za-z0-9]+)\s*$/gm;

export interface BuiltScript {
  header: ScriptHeader;
  source: string;
  sha1: string;
}

function inlineIncludes(luaDir: string, body: string, seen: Set<string>, trail: string[]): string {
  return body.replace(includeDirective, (_line, name: string) => {
    if (trail.includes(name)) throw new Error(`include cycle: ${[...trail, name].join(" -> ")}`);
    if (seen.has(name)) return "";
    seen.add(name);
    const path = join(luaDir, "includes", `${name}.lua`);
    const text = readFileSync(path, "utf8");
    if (!new RegExp(`^local function ${name}\\(`, "m").test(text)) {
      throw new Error(`${path}: an include must define "local function ${name}(…)"`);
    }
    return inlineIncludes(luaDir, text, seen, [...trail, name]).trimEnd();
  });
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
  const body = raw.replace(/^--\[\[\n[\s\S]*?\n\]\]\n/, "");
  const source = `${shebang}${prelude(header)}\n${inlineIncludes(luaDir, body, new Set(), [])}`.replace(
    /\n{3,}/g,
    "\n\n",
  );
  const sha1 = createHash("sha1").update(source).digest("hex");
  return { header, source, sha1 };
}

export function buildAllScripts(luaDir: string): BuiltScript[] {
  return readdirSync(luaDir)
    .filter((file) => file.endsWith(".lua"))
    .sort()
    .map((file) => buildScript(luaDir, file));
}

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

function docComment(text: string, indent = ""): string {
  const lines = text.split("\n").map((line) => line.replaceAll("*/", "*\\/"));
  return `${indent}/**\n${lines.map((line) => `${indent} *${line ? ` ${line}` : ""}`).join("\n")}\n${indent} */`;
}

function shape(typeName: string, section: HeaderSection, valueType: string): string {
  const field = (item: { name: string; doc: string }) =>
    `${item.doc ? `  /** ${item.doc.replaceAll("*/", "*\\/")} */\n` : ""}  ${item.name}: ${valueType};`;
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

function layout(section: HeaderSection): string {
  const fixed = JSON.stringify(section.fixed.map((item) => item.name));
  if (!section.group) return `{ fixed: ${fixed} }`;
  const fields = JSON.stringify(section.group.items.map((item) => item.name));
  return `{ fixed: ${fixed}, group: { name: "${section.group.name}", fields: ${fields} } }`;
}

export function generateModule(scripts: BuiltScript[]): string {
  const out = [
    "// GENERATED by infra/lua-build from lua/*.lua. Do not edit: change the Lua and run `npm run build:lua`.",
    'import type { ScriptDef } from "../scripts.ts";',
    "",
  ];
  for (const { header, source, sha1 } of scripts) {
    const base = pascal(header.name);
    out.push(shape(`${base}Keys`, header.keys, "string"), "");
    out.push(shape(`${base}Args`, header.argv, "string | number"), "");
    out.push(docComment(`${header.purpose}\n\nReturns: ${header.returns}\n\nEvents: ${header.events}`));
    out.push(`export const ${header.name}: ScriptDef<${base}Keys, ${base}Args> = {`);
    out.push(`  name: "${header.name}",`);
    out.push(`  sha1: "${sha1}",`);
    out.push(`  keyLocking: ${/^#!lua[^\n]*allow-key-locking/.test(source)},`);
    out.push(`  keys: ${layout(header.keys)},`);
    out.push(`  argv: ${layout(header.argv)},`);
    out.push(`  source: ${JSON.stringify(source)},`);
    out.push("};", "");
  }
  return out.join("\n");
}
