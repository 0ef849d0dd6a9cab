import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { filesEndingWith } from "../support/source-files.ts";
import { cycles, importGraph, specifiers } from "./import-graph.ts";

const files = (dir: string): string[] => filesEndingWith(dir, ".ts");

/**
 * The rooms of core/ and the rooms each may import (docs/architecture.md draws the same). "root" is
 * core's own folder: errors, types and validate, which every room may use, and the two entries.
 */
const allowedImports: Record<string, string[]> = {
  root: [
    "redis",
    "telemetry",
    "job",
    "events",
    "adds",
    "queue",
    "dead-letter",
    "schedulers",
    "worker",
    "sweeper",
  ],
  redis: ["root", "telemetry"],
  telemetry: [],
  events: ["root", "redis"],
  job: ["root", "redis", "telemetry", "events"],
  adds: ["root", "redis", "telemetry", "job"],
  "dead-letter": ["root", "redis", "job", "adds"],
  schedulers: ["root", "redis", "job", "adds"],
  queue: ["root", "redis", "telemetry", "job", "events", "adds", "dead-letter", "schedulers"],
  worker: ["root", "redis", "telemetry", "job", "events", "dead-letter", "schedulers"],
  sweeper: ["root", "redis", "schedulers", "queue", "worker"],
};
/**
 * Files that hold one public class whole, as BullMQ's does, rather than split it to meet the count:
 * Queue's methods are thin calls into its room's modules (adds, reads, maintenance, settings).
 */
const oneClassFiles: Record<string, number> = { [join("core", "queue", "queue.ts")]: 360 };

const roomOf = (file: string): string => {
  const parts = relative("core", file).split("/");
  return parts.length > 1 ? (parts[0] as string) : "root";
};

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
        // The one exception: Redis over TCP loads ioredis at its first command, through a specifier
        // bundlers do not follow (checked below), so REST-only and edge bundles never carry it.
        if (bad && `${file}: ${target}` !== "core/redis/tcp-redis.ts: ioredis")
          offenders.push(`${file}: ${target}`);
      }
      if (/\bprocess\.env\b/.test(text) && !file.endsWith("client.ts"))
        offenders.push(`${file}: process.env`);
    }
    expect(offenders).toEqual([]);
    expect(readFileSync("core/redis/tcp-redis.ts", "utf8")).not.toMatch(/import\(\s*["']ioredis["']\s*\)/);
  });

  it("keeps modules small", () => {
    const long = files("core")
      .filter((file) => !file.includes("generated"))
      .map((file) => ({ file, lines: readFileSync(file, "utf8").split("\n").length }))
      .filter(({ file, lines }) => lines > (oneClassFiles[file] ?? 320));
    expect(long).toEqual([]);
  });

  it("has no import cycles (type-only imports included)", () => {
    expect(cycles(importGraph("core"))).toEqual([]);
  });

  it("has rooms that form a ladder: no folder cycle, in the table or in the imports", () => {
    const table = new Map(
      Object.entries(allowedImports)
        .filter(([room]) => room !== "root")
        .map(([room, targets]) => [room, targets.filter((target) => target !== "root")]),
    );
    expect(cycles(table)).toEqual([]);
    const used = new Map<string, string[]>();
    for (const [file, targets] of importGraph("core")) {
      const from = roomOf(file);
      for (const target of targets) {
        const to = roomOf(target);
        if (from === to || from === "root" || to === "root") continue;
        used.set(from, [...new Set([...(used.get(from) ?? []), to])]);
      }
    }
    expect(cycles(used)).toEqual([]);
  });

  it("keeps only its entries and shared vocabulary at its root, the rest in rooms", () => {
    const rootFiles = readdirSync("core", { withFileTypes: true })
      .filter((entry) => entry.isFile() && !entry.name.endsWith(".d.ts"))
      .map((entry) => entry.name)
      .sort();
    expect(rootFiles).toEqual(["errors.ts", "index.ts", "internal.ts", "types.ts", "validate.ts"]);
    const rooms = readdirSync("core", { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(rooms).toEqual(
      Object.keys(allowedImports)
        .filter((room) => room !== "root")
        .sort(),
    );
  });

  it("gives each room an index that core/index.ts re-exports, and no core module imports a room's index", () => {
    const rooms = Object.keys(allowedImports).filter((room) => room !== "root");
    const entry = specifiers(join("core", "index.ts"));
    expect(
      entry.filter((s) => !/^\.\/[a-z-]+\/index\.ts$/.test(s) && s !== "./errors.ts" && s !== "./types.ts"),
    ).toEqual([]);
    expect(rooms.filter((room) => !entry.includes(`./${room}/index.ts`))).toEqual([]);
    const offenders: string[] = [];
    for (const [file, targets] of importGraph("core")) {
      if (file === join("core", "index.ts")) continue;
      for (const target of targets)
        if (/^core\/[a-z-]+\/index\.ts$/.test(target)) offenders.push(`${file} -> ${target}`);
    }
    expect(offenders).toEqual([]);
  });

  it("lets each room import only the rooms docs/architecture.md allows", () => {
    const offenders: string[] = [];
    for (const [file, targets] of importGraph("core")) {
      for (const target of targets) {
        const from = roomOf(file);
        const to = roomOf(target);
        if (from !== to && !allowedImports[from]?.includes(to)) offenders.push(`${file} -> ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe("the adapters (functions/, infra/, sandbox/, cli/, nestjs/, examples/)", () => {
  it("reach core only through its index (and nimbusq's own adapters through core/internal.ts)", () => {
    const offenders: string[] = [];
    for (const dir of ["functions", "infra", "sandbox", "cli", "nestjs", "examples"]) {
      for (const file of files(dir)) {
        for (const spec of specifiers(file).filter((s) => s.startsWith("."))) {
          const target = relative(".", resolve(dirname(file), spec));
          if (!target.startsWith("core/")) continue;
          const allowed = [
            "core/index.ts",
            ...(["functions", "infra", "sandbox"].includes(dir) ? ["core/internal.ts"] : []),
          ];
          if (!allowed.includes(target)) offenders.push(`${file}: ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe("the adapters' own files", () => {
  it("have no import cycles either (functions/, sandbox/, infra/, cli/, nestjs/)", () => {
    const found = ["functions", "sandbox", "infra", "cli", "nestjs"].flatMap((dir) =>
      cycles(importGraph(dir)),
    );
    expect(found).toEqual([]);
  });
});

describe("settings", () => {
  it("have one source: the default prefix and the replay-guard TTL are written once (core/redis/keys.ts)", () => {
    const offenders: string[] = [];
    for (const dir of ["core", "functions", "infra", "cli", "nestjs"]) {
      for (const file of files(dir)) {
        if (file === join("core", "redis", "keys.ts") || file.includes("generated")) continue;
        const code = readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line) && !/^\s+--/.test(line));
        for (const [index, line] of code.entries()) {
          if (/["']bull["']/.test(line) || /\bguardTtl\w*\s*[:=?]+\s*600_?000\b/.test(line))
            offenders.push(`${file}:${index + 1}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
