import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type AckAndLeaseArgs,
  type AckAndLeaseArgsJobsItem,
  type AddJobsArgsJobsItem,
  addJobsOutcomes,
  type TrackWorkerArgs,
} from "../../core/redis/generated/scripts.ts";
import {
  buildAllScripts,
  buildScript,
  generateCodesModule,
  generatedCodesPath,
  generatedModulePath,
  generateModule,
  integerArgs,
} from "../../infra/lua-build/generate.ts";
import { argType, HeaderError, parseHeader } from "../../infra/lua-build/header.ts";
import { filesEndingWith } from "../support/source-files.ts";

const luaFiles = (dir: string): string[] => filesEndingWith(dir, ".lua");

describe("the Lua build", () => {
  it("has an up-to-date generated module (run `npm run build:lua` when this fails)", () => {
    const fresh = generateModule(buildAllScripts("lua"));
    expect(readFileSync(generatedModulePath, "utf8")).toBe(fresh);
  });

  it("has an up-to-date generated codes module (run `npm run build:lua` when this fails)", () => {
    expect(readFileSync(generatedCodesPath, "utf8")).toBe(generateCodesModule(buildAllScripts("lua")));
  });

  it("keeps scripts to redis.call, strings and numbers (no libraries Upstash may lack, no clocks)", () => {
    const forbidden = [
      /\bcjson\./,
      /\bcmsgpack\./,
      /\bstruct\./,
      /\bbit\./,
      /redis\.pcall/,
      /redis\.(replicate_commands|set_repl|setresp|sha1hex|breakpoint|debug)/,
      /\bmath\.random/,
      /["']TIME["']/,
      /\bos\./,
      /\bloadstring\b/,
      /\bdofile\b/,
    ];
    const offenders: string[] = [];
    for (const file of luaFiles("lua")) {
      const code = readFileSync(file, "utf8")
        .replace(/--\[\[[\s\S]*?\]\]/g, "")
        .replace(/--.*$/gm, "");
      for (const pattern of forbidden) if (pattern.test(code)) offenders.push(`${file}: ${pattern}`);
    }
    expect(offenders).toEqual([]);
  });

  it("keeps each script and include small", () => {
    const long = luaFiles("lua")
      .map((file) => ({ file, lines: readFileSync(file, "utf8").split("\n").length }))
      .filter(({ lines }) => lines > 130);
    expect(long).toEqual([]);
  });

  it("gives every script a contract header whose names the prelude exposes", () => {
    for (const script of buildAllScripts("lua")) {
      const body = script.source.replace(/^#!lua flags=[a-z,-]+\n/, "");
      expect(body.startsWith(`-- nimbusq:${script.header.name}`)).toBe(true);
      for (const item of script.header.keys.fixed) expect(script.source).toContain(`${item.name} = `);
      expect(script.sha1).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it("flags the per-job paths for Upstash's key-based locking (worker calls, the lone add with a known id), and nothing that builds keys it cannot know", () => {
    const flagged = buildAllScripts("lua")
      .filter((script) => script.source.startsWith("#!lua flags=allow-key-locking\n"))
      .map((script) => script.header.name);
    expect(flagged).toEqual([
      "ackAndLease",
      "advanceEventCursors",
      "changeDelay",
      "deduplicationKey",
      "extendLeases",
      "getRateLimitTtl",
      "handOffJobDeclared",
      "pauseGroup",
      "pauseQueue",
      "publishAddEvents",
      "rateLimitGroup",
      "releaseHandoff",
      "releaseLock",
      "setRateLimit",
      "trackWorker",
      "trimEvents",
      "updateJob",
      "updateQueueMeta",
    ]);
  });

  it("says in every unflagged script's header why it runs under Upstash's global lock", () => {
    for (const script of buildAllScripts("lua")) {
      const flagged = /^#!lua flags=[a-z,-]*allow-key-locking/.test(script.source);
      expect(script.header.globalLock === "", script.header.name).toBe(flagged);
    }
  });

  it("refuses an unflagged script without a GLOBAL LOCK section, and a flagged one with it", () => {
    const dir = mkdtempSync(join(tmpdir(), "nq-lua-"));
    try {
      const header = "--[[\ndemo: A demo.\n\nKEYS\n  key  a key\nREPLY\n  value  int  one\nEVENTS\n  none\n";
      writeFileSync(join(dir, "demo.lua"), `${header}]]\nreturn 1\n`);
      expect(() => buildScript(dir, "demo.lua")).toThrow(/needs a GLOBAL LOCK section/);
      writeFileSync(join(dir, "demo.lua"), `${header}GLOBAL LOCK\n  It reads keys it finds.\n]]\nreturn 1\n`);
      expect(buildScript(dir, "demo.lua").header.globalLock).toBe("It reads keys it finds.");
      writeFileSync(join(dir, "demo.lua"), `${header}GLOBAL LOCK  It reads keys it finds.\n]]\nreturn 1\n`);
      expect(buildScript(dir, "demo.lua").header.globalLock).toBe("It reads keys it finds.");
      writeFileSync(
        join(dir, "demo.lua"),
        `#!lua flags=allow-key-locking\n${header}GLOBAL LOCK\n  It reads keys it finds.\n]]\nreturn 1\n`,
      );
      expect(() => buildScript(dir, "demo.lua")).toThrow(/has no GLOBAL LOCK section/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs the read-only scripts whose keys are all declared under no-writes with key locking", () => {
    const readOnly = buildAllScripts("lua")
      .filter((script) => script.source.startsWith("#!lua flags=no-writes,allow-key-locking\n"))
      .map((script) => script.header.name);
    expect(readOnly).toEqual([
      "countWorkers",
      "getDependencyCounts",
      "getJobCounts",
      "getJobLogs",
      "getJobStates",
      "getMetrics",
      "readAttention",
    ]);
  });
});

describe("typed arguments", () => {
  it("finds the arguments a script (and its includes) check with checkIntegerArgs", () => {
    const source = [
      'checkIntegerArgs("demo", { "now", "leaseMs" })',
      'local function f() checkIntegerArgs("inner", {\n  "count",\n  "peek" }) end',
      "local x = ARGV[ARG.name]",
    ].join("\n");
    expect([...integerArgs(source)].sort()).toEqual(["count", "leaseMs", "now", "peek"]);
  });

  it("types each argument as its header line says: int, int?, flag, string, a union of texts", () => {
    expect(["int", "int?", "flag", "string", '"a"|"b-c"|""'].map(argType)).toEqual([
      "number",
      'number | ""',
      '"1" | ""',
      "string",
      '"a" | "b-c" | ""',
    ]);
    for (const bad of ["", "number", '"a"', '"a"|b', "text"]) expect(argType(bad)).toBeUndefined();
    expectTypeOf<AckAndLeaseArgs["leaseToken"]>().toEqualTypeOf<string>();
    expectTypeOf<AckAndLeaseArgs["now"]>().toEqualTypeOf<number>();
    expectTypeOf<AckAndLeaseArgsJobsItem["attemptsMade"]>().toEqualTypeOf<number | "">();
    expectTypeOf<AckAndLeaseArgsJobsItem["outcome"]>().toEqualTypeOf<
      "completed" | "failed" | "delayed" | "waiting" | "returned"
    >();
    expectTypeOf<AddJobsArgsJobsItem["dedupExtend"]>().toEqualTypeOf<"1" | "">();
    expectTypeOf<TrackWorkerArgs["events"]>().toEqualTypeOf<"all" | "final" | "none" | "">();
  });

  it("refuses an argument without a type, and a checked integer typed as anything but int", () => {
    const dir = mkdtempSync(join(tmpdir(), "nq-lua-"));
    const build = (argv: string) => {
      const header = `--[[\ndemo: Does a thing\n\nARGV\n${argv}\nREPLY\n  one  int  1\nEVENTS\n  none\nGLOBAL LOCK\n  A demo.\n]]\n`;
      writeFileSync(join(dir, "demo.lua"), `${header}checkIntegerArgs("demo", { "now" })\nreturn 1\n`);
      return () => buildScript(dir, "demo.lua");
    };
    expect(build("  now  the clock")).toThrow(/"now" needs a type/);
    expect(build("  now  string  the clock")).toThrow(
      /checked with checkIntegerArgs, so its type must be int, not string/,
    );
    expect(build("  now  int  the clock")).not.toThrow();
    rmSync(dir, { recursive: true });
  });
});

describe("parseHeader", () => {
  const good = `--[[
demo: Does a thing
  over two lines.

KEYS
  first  the first key
ARGV
  now  int  the clock
ARGV repeated jobs
  id  string  a job id
    continued here
RETURNS
  1
EVENTS
  none
]]
return 1`;

  it("reads names, groups and continued descriptions", () => {
    const header = parseHeader("demo.lua", good);
    expect(header.purpose).toBe("Does a thing over two lines.");
    expect(header.keys.fixed.map((i) => i.name)).toEqual(["first"]);
    expect(header.argv.group).toEqual({
      name: "jobs",
      items: [{ name: "id", type: "string", doc: "a job id continued here" }],
    });
  });

  it("reads OUTCOMES (names for positive values, which may repeat across fields) and refuses a repeated name", () => {
    const withOutcomes = good.replace(
      "EVENTS",
      "OUTCOMES\n  created  1  added\n    at once\n  done  1  an entry's code\n  none  0\nEVENTS",
    );
    expect(parseHeader("demo.lua", withOutcomes).outcomes).toEqual([
      { name: "created", value: 1, doc: "added at once" },
      { name: "done", value: 1, doc: "an entry's code" },
      { name: "none", value: 0, doc: "" },
    ]);
    expect(() => parseHeader("demo.lua", good.replace("EVENTS", "OUTCOMES\n  a  1\n  a  2\nEVENTS"))).toThrow(
      /repeats a name/,
    );
    expect(() => parseHeader("demo.lua", good.replace("EVENTS", "OUTCOMES\n  a  -1\nEVENTS"))).toThrow(
      HeaderError,
    );
    expect(addJobsOutcomes).toEqual({ created: 1, duplicated: 2, deduplicated: 3 });
  });

  it("rejects a header for another file, a duplicate name or a missing RETURNS", () => {
    expect(() => parseHeader("other.lua", good)).toThrow(HeaderError);
    expect(() =>
      parseHeader(
        "demo.lua",
        good.replace("  now  int  the clock", "  now  int  the clock\n  now  int  again"),
      ),
    ).toThrow(/declared twice/);
    expect(() => parseHeader("demo.lua", good.replace("RETURNS\n  1\n", ""))).toThrow(/RETURNS/);
    expect(() => parseHeader("demo.lua", "return 1")).toThrow(/contract header/);
  });
});
