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
import { buildAllScripts, layoutOf } from "../lua-build/generate.ts";
import { replyShape } from "../lua-build/reply-type.ts";
import { packJson } from "./pack-json.ts";

const generatedScripts = /[\\/]core[\\/]redis[\\/]generated[\\/]scripts\.ts$/;
const packedModule = "nimbusq:packed-lua";

interface Script {
  name: string;
  sha1: string;
  source: string;
  /** What the generated definition and decoder hold beside the source: the KEYS and ARGV layouts, the reply shape. */
  shape: [keys: unknown, argv: unknown, reply: unknown];
}

let built: Script[] | undefined;

/** Every script as the Lua build makes it from lua/ (what core/redis/generated/scripts.ts holds). */
function allScripts(): Script[] {
  built ??= buildAllScripts(fileURLToPath(new URL("../../lua/", import.meta.url))).map(
    ({ header, sha1, source }) => ({
      name: header.name,
      sha1,
      source,
      shape: [
        layoutOf(header.keys),
        layoutOf(header.argv),
        replyShape(header.name, header.reply, header.codes),
      ],
    }),
  );
  return built;
}

/** The named scripts, refusing a name the Lua build does not know. */
function scriptsNamed(names: readonly string[]): Script[] {
  const byName = new Map(allScripts().map((script) => [script.name, script]));
  return names.map((name) => {
    const script = byName.get(name);
    if (!script) throw new Error(`packed scripts: no script named ${name}`);
    return script;
  });
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
  return packJson(Object.fromEntries(scriptsNamed(names).map((script) => [script.name, script.source])));
}

// One script definition as the generator writes it, and one reply shape.
const definition =
  /export const (\w+): ScriptDef<(\w+), (\w+)> = \{\n {2}name: "(\w+)",\n {2}sha1: "([0-9a-f]{40})",\n {2}keyLocking: (true|false),\n {2}keys: .*,\n {2}argv: .*,\n {2}source: \/\* @__PURE__ \*\/ \[\n[\s\S]*?\n {2}\]\.join\(""\),\n\};\n/g;
const replyDefinition = /^const (\w+)Reply: ReplySpec = (\{.*\});$/gm;

/**
 * generated/scripts.ts with every definition's layouts, reply shape and source read from the packed
 * tables; refuses a module whose layout it does not know (every script rewritten, each reply shape too).
 */
export function withPackedSources(text: string): string {
  const rewritten = new Set<string>();
  let replies = 0;
  const out = text
    .replace(
      definition,
      (_m, constName: string, keysType: string, argsType: string, name: string, sha1, locking) => {
        rewritten.add(name);
        const args = [JSON.stringify(name), JSON.stringify(sha1), locking].join(", ");
        return `export const ${constName}: ScriptDef<${keysType}, ${argsType}> = /* @__PURE__ */ packedScript(${args});\n`;
      },
    )
    .replace(replyDefinition, (_m, name: string) => {
      if (!rewritten.has(name))
        throw new Error(`packed scripts: a reply shape for an unknown script ${name}`);
      replies += 1;
      return `const ${name}Reply: ReplySpec = /* @__PURE__ */ packedReply(${JSON.stringify(name)});`;
    });
  const expected = allScripts().length;
  if (rewritten.size !== expected || replies !== expected)
    throw new Error(
      `packed scripts: rewrote ${rewritten.size} definitions and ${replies} reply shapes of ${expected}; has the generator changed?`,
    );
  return `import { packedReply, packedScript } from "${packedModule}";\n${out}`;
}

/**
 * The virtual module: the scripts' layouts and reply shapes (unpacked at the first script call, a few
 * KB) and their sources (unpacked at the first NOSCRIPT), for the scripts in `names` only.
 */
/** The layouts and reply shapes of these scripts by name, as the packed table holds them. */
export function scriptShapes(names: readonly string[]): Record<string, Script["shape"]> {
  return Object.fromEntries(scriptsNamed(names).map((script) => [script.name, script.shape]));
}

function tableModule(names: readonly string[]): string {
  const shapeTable = scriptShapes(names);
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
  return {
    name: "packed-scripts",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^nimbusq:packed-lua$/ }, () => ({
        path: packedModule,
        namespace: "packed-lua",
      }));
      pluginBuild.onLoad({ filter: generatedScripts }, async (args) => {
        const { readFile } = await import("node:fs/promises");
        const contents = withPackedSources(await readFile(args.path, "utf8"));
        return { contents, loader: "ts", resolveDir: dirname(args.path) };
      });
      pluginBuild.onLoad({ filter: /.*/, namespace: "packed-lua" }, () => ({
        contents: tableModule(names),
        loader: "js",
      }));
    },
  };
}
