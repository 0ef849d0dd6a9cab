/**
 * `npm run build:package` (and `prepack`): the package's ESM JavaScript and .d.ts in dist/, from
 * tsconfig.build.json. dist/ is emptied first so a module that was removed or renamed never ships.
 *
 * tsc rather than esbuild: the declarations need tsc in any case, and tsc alone rewrites the sources'
 * `.ts` import specifiers to `.js` file by file (esbuild rewrites nothing unless it bundles). One file
 * out per file in keeps each module separate, so a user's bundler drops what a program never imports
 * (the scheduler code of a producer that only adds jobs, see `sideEffects` in package.json), and the
 * JavaScript is exactly what `npm run typecheck` checked. Dependencies stay imports, never copies.
 */
import { execFile } from "node:child_process";
import { readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

interface PackageBuild {
  outDir: string;
  files: number;
  bytes: number;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Empties `<root>/dist` and compiles the package into it; throws with tsc's output on errors. */
async function buildPackage(root = "."): Promise<PackageBuild> {
  const base = resolve(root);
  const outDir = join(base, "dist");
  rmSync(outDir, { recursive: true, force: true });
  const tsc = join(base, "node_modules/typescript/bin/tsc");
  try {
    await run(process.execPath, [tsc, "-p", join(base, "tsconfig.build.json")], { cwd: base });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc -p tsconfig.build.json failed:\n${stdout}${stderr}`.trimEnd());
  }
  const files = walk(outDir);
  return { outDir, files: files.length, bytes: files.reduce((sum, file) => sum + statSync(file).size, 0) };
}

const started = performance.now();
try {
  const built = await buildPackage();
  console.log(
    `package: ${built.files} files (.js and .d.ts), ${(built.bytes / 1024).toFixed(1)} KB in dist/, ` +
      `built in ${Math.round(performance.now() - started)} ms`,
  );
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
