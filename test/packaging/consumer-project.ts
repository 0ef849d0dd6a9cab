/**
 * A user's project, outside the repository: `npm pack` of the repository (which runs `prepack`, the
 * package build), then an empty `"type": "module"` project that installs the tarball with npm, beside
 * nothing but TypeScript 5 and @types/node 20 (the versions the repository pins, so npm's cache has
 * them). Whatever runs there resolves `nimbusq` from that project's node_modules, never from the
 * repository's sources.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./service.ts";

const execFileAsync = promisify(execFile);

export interface Ran {
  stdout: string;
  stderr: string;
}

/** Runs a command; a failure is an error carrying the command's output. */
export async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number },
): Promise<Ran> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeout ?? 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { stdout, stderr };
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${options.cwd}:\n${stdout}\n${stderr}`.trim());
  }
}

export interface ConsumerProject {
  /** The temporary directory holding the tarball and the project. */
  root: string;
  tarball: string;
  /** The project: package.json, node_modules with nimbusq from the tarball. */
  dir: string;
  /** Milliseconds spent in `npm pack` and in `npm install`. */
  timings: { packMs: number; installMs: number };
  write(name: string, text: string): string;
  remove(): void;
}

/** `npm install` of `packages` in `dir`, from npm's cache where it has them (the registry otherwise). */
export async function npmInstall(dir: string, packages: string[]): Promise<void> {
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...packages], {
    cwd: dir,
    timeout: 180_000,
  });
}

/** The version of a package the repository itself installed (npm's cache has it). */
export const pinned = (name: string) =>
  (
    JSON.parse(readFileSync(join(repoRoot, "node_modules", name, "package.json"), "utf8")) as {
      version: string;
    }
  ).version;

export async function consumerProject(): Promise<ConsumerProject> {
  const root = mkdtempSync(join(tmpdir(), "nimbusq-tarball-"));
  const remove = () => rmSync(root, { recursive: true, force: true });
  try {
    let started = performance.now();
    await run("npm", ["pack", "--pack-destination", root], { cwd: repoRoot, timeout: 120_000 });
    const packMs = performance.now() - started;
    const tarballs = readdirSync(root).filter((name) => name.endsWith(".tgz"));
    if (tarballs.length !== 1) throw new Error(`npm pack left ${tarballs.length} tarballs in ${root}`);
    const tarball = join(root, tarballs[0] as string);

    const dir = join(root, "app");
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    started = performance.now();
    await npmInstall(dir, [
      tarball,
      `typescript@${pinned("typescript")}`,
      `@types/node@${pinned("@types/node")}`,
    ]);
    const installMs = performance.now() - started;
    const write = (name: string, text: string) => {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    };
    return { root, tarball, dir, timings: { packMs, installMs }, write, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** Every file under a directory, relative to it. */
export function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? filesUnder(dir, path) : [path];
  });
}
