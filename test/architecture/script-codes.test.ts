/**
 * Script return codes are named once, in the CODES of each Lua header, and reach TypeScript as the
 * generated `as const` objects (core/redis/generated/codes.ts). A bare negative number compared with
 * or switched on in core/ is a code written a second time, or a reply read by hand.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { filesEndingWith } from "../support/source-files.ts";

/** Core's TypeScript, without the generated modules. */
const files = (dir: string): string[] =>
  filesEndingWith(dir, ".ts").filter((file) => !file.split("/").includes("generated"));

/** `x === -1`, `x < -2`, `-9 !== x`, `case -3:` (not `=> -1`, not `a - 1 > b`). */
const comparedNegative = [
  /(?:[=!]==?|(?<![=-])>=?|<=?)\s*-\s*\d/,
  /(?<![\w\])\s])-\d+\s*(?:[=!]==?|[<>]=?)(?!>)/,
  /\bcase\s+-\s*\d/,
];

/** Negative numbers that are no script's code, each with its reason. */
const exceptions: Record<string, RegExp> = {
  // A user's backoff strategy answers -1 for "do not retry" (BullMQ's contract), not a script.
  [join("core", "job", "backoff.ts")]: /\bwait === -1\b/,
};

describe("script return codes in core/", () => {
  it("are never bare negative numbers compared or switched on outside the generated modules", () => {
    const offenders: string[] = [];
    for (const file of files("core")) {
      const lines = readFileSync(file, "utf8").split("\n");
      for (const [index, line] of lines.entries()) {
        const code = line.replace(/\/\/.*$/, "");
        if (/^\s*(\*|\/\*)/.test(code)) continue;
        if (!comparedNegative.some((pattern) => pattern.test(code))) continue;
        if (exceptions[file]?.test(code)) continue;
        offenders.push(`${file}:${index + 1}: ${line.trim()}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("catches the forms it looks for", () => {
    const caught = (line: string) => comparedNegative.some((pattern) => pattern.test(line));
    for (const line of ["if (code === -9)", "if (reply !== -1) x", "x < -2", "-4 === code", "case -3:"])
      expect(caught(line), line).toBe(true);
    for (const line of ["const f = (x) => -1;", "end = -1,", "a - 1 > b", "check.integer('end', end, -1)"])
      expect(caught(line), line).toBe(false);
  });
});
