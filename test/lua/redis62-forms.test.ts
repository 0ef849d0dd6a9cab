/**
 * nimbusq's own scripts keep to the forms every Upstash database has (Redis 6.2), whatever the stand-in
 * lets through now that Upstash promises "up to 8.2": a scan of every `redis.call` in lua/ against the
 * REST server's table of Redis 7.0-only forms (infra/rest-server/redis62.ts), and of every shebang.
 * (The test run's REST servers also refuse those forms at run time: `redis62: true`.)
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REDIS62_RULES } from "../../infra/rest-server/redis62.ts";
import { filesEndingWith } from "../support/source-files.ts";

interface Call {
  file: string;
  name: string;
  /** The call's arguments after the command name, as source text split at top-level commas. */
  args: string[];
}

/** Every `redis.call("NAME", …)` with its top-level arguments. */
function calls(file: string, text: string): Call[] {
  const found: Call[] = [];
  for (const match of text.matchAll(/redis\.call\(\s*"([A-Za-z]+)"/g)) {
    let depth = 1;
    let at = (match.index ?? 0) + match[0].length;
    const start = at;
    while (at < text.length && depth > 0) {
      if (text[at] === "(" || text[at] === "{") depth += 1;
      else if (text[at] === ")" || text[at] === "}") depth -= 1;
      at += 1;
    }
    const inner = text.slice(start, at - 1);
    const args: string[] = [];
    let current = "";
    let level = 0;
    for (const char of inner) {
      if (char === "(" || char === "{") level += 1;
      if (char === ")" || char === "}") level -= 1;
      if (char === "," && level === 0) {
        args.push(current.trim());
        current = "";
      } else current += char;
    }
    if (current.trim() !== "") args.push(current.trim());
    found.push({ file, name: (match[1] as string).toLowerCase(), args: args.filter((a) => a !== "") });
  }
  return found;
}

const literal = (arg: string | undefined) => /^"([^"]*)"$/.exec(arg ?? "")?.[1]?.toUpperCase();

/** The 7.0-only rule a call breaks, or undefined. Calls whose arguments are spread (`unpack`) keep their count unknown. */
function broken(call: Call): string | undefined {
  for (const rule of REDIS62_RULES) {
    const [command, sub] = rule.command.split("|");
    if (command !== call.name) continue;
    if (sub !== undefined && literal(call.args[0])?.toLowerCase() !== sub) continue;
    const { check } = rule;
    const words = new Set(call.args.map(literal).filter((w): w is string => w !== undefined));
    if (check.kind === "new") return rule.form;
    if (check.kind === "words" && check.words.every((word) => words.has(word))) return rule.form;
    if (
      check.kind === "max-args" &&
      !call.args.some((a) => a.includes("unpack")) &&
      call.args.length + 1 > check.max
    )
      return rule.form;
    if (check.kind === "xadd-id" && call.args.some((a) => /^"\d+-\*"$/.test(a))) return rule.form;
  }
  return undefined;
}

describe("lua/ keeps to Redis 6.2's forms", () => {
  const files = filesEndingWith("lua", ".lua");

  it("finds the calls it scans (the scan reads what it should)", () => {
    const all = files.flatMap((file) => calls(file, readFileSync(file, "utf8")));
    expect(all.length).toBeGreaterThan(300);
    expect(all.some((call) => call.name === "zadd" && call.args.some((a) => a === '"LT"'))).toBe(true);
    // The scan would catch a 7.0 form: SET with NX and GET.
    expect(broken({ file: "x", name: "set", args: ["k", "v", '"NX"', '"GET"'] })).toMatch(/NX and GET/);
    expect(broken({ file: "x", name: "expire", args: ["k", "10", '"NX"'] })).toMatch(/EXPIRE/);
    expect(broken({ file: "x", name: "lmpop", args: ["1", "k", '"LEFT"'] })).toBeDefined();
  });

  it("no script makes a Redis 7.0-only call", () => {
    const offenders = files.flatMap((file) =>
      calls(file, readFileSync(file, "utf8"))
        .map((call) => ({ call, form: broken(call) }))
        .filter(({ form }) => form !== undefined)
        .map(({ call, form }) => `${call.file}: ${call.name} (${form})`),
    );
    expect(offenders).toEqual([]);
  });

  it("no script has a shebang but Upstash's #!lua flags=allow-key-locking (with no-writes when read-only)", () => {
    const shebangs = files
      .map((file) => [file, readFileSync(file, "utf8").split("\n")[0] as string] as const)
      .filter(([, first]) => first.startsWith("#!"))
      .filter(
        ([, first]) =>
          first.trim() !== "#!lua flags=allow-key-locking" &&
          first.trim() !== "#!lua flags=no-writes,allow-key-locking",
      );
    expect(shebangs).toEqual([]);
  });
});
