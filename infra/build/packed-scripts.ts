/**
 * The Lua scripts of a Lambda bundle, packed. A script's source is sent only when Redis answers
 * EVALSHA with NOSCRIPT (a new or flushed server; runScript then sends EVAL), so the bundle need not
 * carry it as text: this plugin rewrites core/redis/generated/scripts.ts so that each script's
 * `source` is a getter over a table of the sources of the scripts the bundle calls (pack-json.ts:
 * ~25 KB for the HTTP function's 38 scripts, ~170 KB as text), unpacked at the first NOSCRIPT; and its
 * KEYS/ARGV layouts and reply shape are getters over a smaller table, unpacked at the first script
 * call. Neither is unpacked at import. node:zlib is taken then with `process.getBuiltinModule` (Node
 * 20.16+, 22.3+: Lambda's nodejs22.x), synchronously, as a getter must.
 *
 * Which scripts a bundle calls is learnt from a first build: a script is called when its SHA-1 is in
 * the output (each definition keeps its name, SHA-1 and key-locking flag as text).
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "esbuild";
import { buildAllScripts } from "../lua-build/generate.ts";
import { packJson } from "./pack-json.ts";

const generatedScripts = /[\\/]core[\\/]redis[\\/]generated[\\/]scripts\.ts$/;
const packedModule = "nimbusq:packed-lua";

interface Script {
  name: string;
  sha1: string;
  source: string;
}

let built: Script[] | undefined;

/** Every script as the Lua build makes it from lua/ (what core/redis/generated/scripts.ts holds). */
function allScripts(): Script[] {
  built ??= buildAllScripts(fileURLToPath(new URL("../../lua/", import.meta.url))).map((script) => ({
    name: script.header.name,
    sha1: script.sha1,
    source: script.source,
  }));
  return built;
}

/** The scripts whose SHA-1 appears in a bundle's text, by name. */
export function scriptsIn(bundleText: string): string[] {
  return allScripts()
    .filter((script) => bundleText.includes(script.sha1))
    .map((script) => script.name)
    .sort();
}

/** The sources of these scripts as a packed table by name. */
export function packSources(names: readonly string[]): string {
  const byName = new Map(allScripts().map((script) => [script.name, script.source]));
  const table: Record<string, string> = {};
  for (const name of names) {
    const source = byName.get(name);
    if (source === undefined) throw new Error(`packed scripts: no script named ${name}`);
    table[name] = source;
  }
  return packJson(table);
}

// One script definition as the generator writes it, and one reply shape.
const definition =
  /export const (\w+): ScriptDef<(\w+), (\w+)> = \{\n {2}name: "(\w+)",\n {2}sha1: "([0-9a-f]{40})",\n {2}keyLocking: (true|false),\n {2}keys: (.*),\n {2}argv: (.*),\n {2}source: \/\* @__PURE__ \*\/ \[\n[\s\S]*?\n {2}\]\.join\(""\),\n\};\n/g;
const replyShape = /^const (\w+)Reply: ReplySpec = (\{.*\});$/gm;

/** What the rewritten module reads from the packed tables. */
export interface PackedModule {
  /** generated/scripts.ts with every definition's layouts, reply shape and source read from the tables. */
  text: string;
  /** Each script's layouts and reply shape, by name (JavaScript object text, as the generator wrote them). */
  shapes: Map<string, { keys: string; argv: string; reply?: string }>;
}

/** Rewrites generated/scripts.ts to read from the packed tables; refuses a layout it does not know. */
export function withPackedSources(text: string): PackedModule {
  const shapes: PackedModule["shapes"] = new Map();
  let rewritten = text.replace(
    definition,
    (
      _m,
      constName: string,
      keysType: string,
      argsType: string,
      name: string,
      sha1: string,
      locking,
      keys,
      argv,
    ) => {
      shapes.set(name, { keys, argv });
      const args = [JSON.stringify(name), JSON.stringify(sha1), locking].join(", ");
      return `export const ${constName}: ScriptDef<${keysType}, ${argsType}> = /* @__PURE__ */ packedScript(${args});\n`;
    },
  );
  let replies = 0;
  rewritten = rewritten.replace(replyShape, (_m, name: string, spec: string) => {
    const shape = shapes.get(name);
    if (!shape) throw new Error(`packed scripts: a reply shape for an unknown script ${name}`);
    shape.reply = spec;
    replies += 1;
    return `const ${name}Reply: ReplySpec = /* @__PURE__ */ packedReply(${JSON.stringify(name)});`;
  });
  const expected = allScripts().length;
  if (shapes.size !== expected || replies !== expected)
    throw new Error(
      `packed scripts: rewrote ${shapes.size} definitions and ${replies} reply shapes of ${expected}; has the generator changed?`,
    );
  return { text: `import { packedReply, packedScript } from "${packedModule}";\n${rewritten}`, shapes };
}

/** Object text as the generator writes it (JavaScript literals of JSON values), read back. */
function literal(text: string): unknown {
  return Function(`"use strict"; return (${text});`)();
}

/**
 * The virtual module: the scripts' layouts and reply shapes (unpacked at the first script call, a few
 * KB) and their sources (unpacked at the first NOSCRIPT), for the scripts in `names` only.
 */
function tableModule(names: readonly string[], shapes: PackedModule["shapes"]): string {
  const shapeTable: Record<string, unknown> = {};
  for (const name of names) {
    const shape = shapes.get(name);
    if (!shape) throw new Error(`packed scripts: no script named ${name}`);
    shapeTable[name] = [literal(shape.keys), literal(shape.argv), literal(shape.reply ?? "null")];
  }
  return [
    "const unpack = (packed) =>",
    '  JSON.parse(process.getBuiltinModule("node:zlib").brotliDecompressSync(Buffer.from(packed, "base64")).toString("utf8"));',
    "let shapes, sources;",
    "function shapeOf(name) {",
    `  shapes ??= unpack(${JSON.stringify(packJson(shapeTable))});`,
    "  const shape = shapes[name];",
    '  if (shape === undefined) throw new Error("nimbusq: the bundle carries no script " + name);',
    "  return shape;",
    "}",
    "export function packedScript(name, sha1, keyLocking) {",
    "  return {",
    "    name, sha1, keyLocking,",
    "    get keys() { return shapeOf(name)[0]; },",
    "    get argv() { return shapeOf(name)[1]; },",
    "    get source() {",
    `      sources ??= unpack(${JSON.stringify(packSources(names))});`,
    "      return sources[name];",
    "    },",
    "  };",
    "}",
    "export function packedReply(script) {",
    "  return { script, get codes() { return shapeOf(script)[2].codes; }, get forms() { return shapeOf(script)[2].forms; } };",
    "}",
    "",
  ].join("\n");
}

/** Swaps the scripts' layouts, reply shapes and sources for packed tables holding those of `names`. */
export function packedScripts(names: readonly string[]): Plugin {
  let shapes: PackedModule["shapes"] | undefined;
  return {
    name: "packed-scripts",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^nimbusq:packed-lua$/ }, () => ({
        path: packedModule,
        namespace: "packed-lua",
      }));
      pluginBuild.onLoad({ filter: generatedScripts }, async (args) => {
        const { readFile } = await import("node:fs/promises");
        const rewritten = withPackedSources(await readFile(args.path, "utf8"));
        shapes = rewritten.shapes;
        return { contents: rewritten.text, loader: "ts", resolveDir: dirname(args.path) };
      });
      pluginBuild.onLoad({ filter: /.*/, namespace: "packed-lua" }, () => {
        if (!shapes) throw new Error("packed scripts: the table was asked for before the scripts module");
        return { contents: tableModule(names, shapes), loader: "js" };
      });
    },
  };
}
