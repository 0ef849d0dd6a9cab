/**
 * A script's shipped source as segments: its own code between `-- @include` lines, and each include's
 * code (an include may itself include others, so it is cut at its own directives into parts). Many
 * scripts share includes, and a bundle carries every script one function runs — the HTTP function
 * some thirty, whose sources were 112 KB with their includes inlined and 42 KB with each include once.
 * So the generated module holds every include part once, as a constant, and builds each script's source
 * from its segments when it loads (the SHA-1 is over the joined text, as before). An include already
 * inlined earlier in the same script is left out, so each `local function` is defined once.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stripLuaComments } from "./strip.ts";

/** A piece of a script's source: its own code, or one part of an include (`part` counts from 0). */
export type Segment =
  | { readonly kind: "code"; readonly text: string }
  | { readonly kind: "include"; readonly name: string; readonly part: number; readonly text: string };

const directive = /^-- @include ([A-Za-z0-9]+)[ \t]*$/gm;
/** The line that marks where an inlined include starts; the only comment the shipped source keeps. */
const mark = /^-- include [A-Za-z0-9]+$/;

/** The text split at its include directives: `[code, name, code, name, …, code]`. */
function splitAtDirectives(text: string): { codes: string[]; names: string[] } {
  const codes: string[] = [];
  const names: string[] = [];
  let from = 0;
  for (const match of text.matchAll(directive)) {
    codes.push(text.slice(from, match.index));
    names.push(match[1] as string);
    from = (match.index as number) + match[0].length;
  }
  codes.push(text.slice(from));
  return { codes, names };
}

function readInclude(luaDir: string, name: string): string {
  const path = join(luaDir, "includes", `${name}.lua`);
  const text = readFileSync(path, "utf8");
  if (!new RegExp(`^local function ${name}\\(`, "m").test(text)) {
    throw new Error(`${path}: an include must define "local function ${name}(…)"`);
  }
  return text;
}

/** The body's segments with its includes (and theirs) in place, comments taken out. */
export function segmentsOf(luaDir: string, body: string): Segment[] {
  const out: Segment[] = [];
  const seen = new Set<string>();
  const walk = (text: string, include: string | null, trail: string[]): void => {
    const { codes, names } = splitAtDirectives(text);
    codes.forEach((code, i) => {
      const head = include !== null && i === 0 ? `-- include ${include}\n` : "";
      const stripped = stripLuaComments(head + code, mark);
      if (stripped !== "") {
        out.push(
          include === null
            ? { kind: "code", text: stripped }
            : { kind: "include", name: include, part: i, text: stripped },
        );
      }
      const name = names[i];
      if (name === undefined) return;
      if (trail.includes(name)) throw new Error(`include cycle: ${[...trail, name].join(" -> ")}`);
      if (seen.has(name)) return;
      seen.add(name);
      walk(readInclude(luaDir, name), name, [...trail, name]);
    });
  };
  walk(body, null, []);
  return out;
}

/** The name of the generated constant that holds one include part. */
export function partConstant(segment: Extract<Segment, { kind: "include" }>): string {
  return `include_${segment.name}_${segment.part}`;
}
