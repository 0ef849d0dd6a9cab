/**
 * Compiles Nest test apps the way Nest apps are built (tsc, legacy decorators, decorator metadata),
 * into a folder of its own under node_modules/.cache (so the compiled files resolve the repo's
 * node_modules), and returns a loader for the compiled modules. Type errors fail the compile.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");

export interface CompiledApps {
  /** Imports the compiled form of a source file given relative to the repo root. */
  load<T = Record<string, unknown>>(sourcePath: string): Promise<T>;
  remove(): void;
}

/** The compiled sources of each `nimbusq` entry the example imports by name (tsconfig's `paths`). */
const entries: Record<string, string> = { nimbusq: "core/index.js", "nimbusq/nestjs": "nestjs/index.js" };

/** tsc keeps `from "nimbusq"` as written: point each such import at the compiled repo sources. */
function pointPackageImports(outDir: string): void {
  const examples = join(outDir, "examples");
  if (!existsSync(examples)) return;
  for (const file of readdirSync(examples, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".js")) continue;
    const path = join(examples, file);
    const text = readFileSync(path, "utf8").replace(
      /from "(nimbusq(?:\/nestjs)?)"/g,
      (_all, name: string) => {
        const target = relative(dirname(path), join(outDir, entries[name] as string));
        return `from "${target.startsWith(".") ? target : `./${target}`}"`;
      },
    );
    writeFileSync(path, text);
  }
}

export function compileApps(files: string[], label: string): CompiledApps {
  const outDir = join(root, "node_modules/.cache/nimbusq-nestjs-tests", `${label}-${process.pid}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const config = ts.getParsedCommandLineOfConfigFile(
    join(here, "tsconfig.json"),
    { outDir },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error("test/nestjs/tsconfig.json could not be read");
  // Emit without checking (the repo sources are checked by `npm run typecheck`; checking all they
  // import again here takes many seconds), then check the apps alone, reusing the parsed files.
  const roots = files.map((file) => join(root, file));
  const emitting = ts.createProgram(roots, { ...config.options, noCheck: true });
  const emitted = emitting.emit();
  const checking = ts.createProgram(roots, config.options, undefined, emitting);
  const apps = roots.map((file) => checking.getSourceFile(file));
  const diagnostics = [
    ...checking.getOptionsDiagnostics(),
    ...apps.flatMap((file) => [
      ...checking.getSyntacticDiagnostics(file),
      ...checking.getSemanticDiagnostics(file),
    ]),
    ...emitted.diagnostics,
  ];
  if (diagnostics.length > 0) {
    const text = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => root,
      getNewLine: () => "\n",
    });
    throw new Error(`compiling the Nest test apps failed:\n${text}`);
  }
  pointPackageImports(outDir);
  return {
    load: async (sourcePath) => {
      const compiled = join(outDir, relative(root, join(root, sourcePath))).replace(/\.ts$/, ".js");
      return await import(pathToFileURL(compiled).href);
    },
    remove: () => rmSync(outDir, { recursive: true, force: true }),
  };
}
