import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

describe("core/", () => {
  it("imports nothing runtime-specific (no node:*, AWS SDK, Lambda types, HTTP framework, functions/ or infra/)", () => {
    const offenders: string[] = [];
    for (const file of files("core")) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
        const target = match[1] as string;
        const bad =
          /^node:|^@aws-sdk\/|^aws-lambda$|^hono|^ioredis|^bullmq/.test(target) ||
          /(^|\/)(functions|infra)\//.test(target) ||
          ["fs", "path", "os", "net", "http", "crypto", "child_process"].includes(target);
        if (bad) offenders.push(`${file}: ${target}`);
      }
      if (/\bprocess\.env\b/.test(text) && !file.endsWith("client.ts"))
        offenders.push(`${file}: process.env`);
    }
    expect(offenders).toEqual([]);
  });

  it("keeps modules small", () => {
    const long = files("core")
      .filter((file) => !file.includes("generated"))
      .map((file) => ({ file, lines: readFileSync(file, "utf8").split("\n").length }))
      .filter(({ lines }) => lines > 320);
    expect(long).toEqual([]);
  });
});
