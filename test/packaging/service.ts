/**
 * A copy of the service in a temporary directory, outside the repository: serverless.yml (with the
 * files it includes) and freshly built bundles. Packaging and importing happen there, so the repository stays clean and a bundle
 * cannot reach the repository's node_modules (the AWS SDK among them).
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type BundleReport, bundleFunctions } from "../../infra/build/bundle.ts";
import { functionEntries } from "../../infra/build/functions.ts";

const run = promisify(execFile);

export const repoRoot = resolve(import.meta.dirname, "../..");

export interface ServiceCopy {
  dir: string;
  bundles: BundleReport[];
  remove(): void;
}

/** The service's configuration files: serverless.yml and what it includes with `${file(…)}`. */
export const configFiles = ["serverless.yml", "serverless-alarms.yml", "serverless-vpc.yml"];

/**
 * With `bundles: false` each function's bundle is a one-line stand-in: enough for `osls package`
 * when only the template matters, without the esbuild runs.
 */
export async function serviceCopy(options: { bundles?: boolean } = {}): Promise<ServiceCopy> {
  const dir = mkdtempSync(join(tmpdir(), "nimbusq-packaging-"));
  for (const file of configFiles) copyFileSync(join(repoRoot, file), join(dir, file));
  const outDir = join(dir, "build/lambda");
  let bundles: BundleReport[] = [];
  if (options.bundles === false) {
    for (const fn of functionEntries) {
      mkdirSync(join(outDir, fn.name), { recursive: true });
      writeFileSync(join(outDir, fn.name, "index.mjs"), "export const handler = async () => {};\n");
    }
  } else bundles = await bundleFunctions({ root: repoRoot, outDir });
  return { dir, bundles, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Environment without AWS credentials or profile: packaging must not need them. */
export function offlineEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^AWS_|^SLS_|^SERVERLESS_/.test(name)) env[name] = value;
  }
  return { ...env, HOME: home, SLS_TELEMETRY_DISABLED: "1", AWS_REGION: "us-east-1" };
}

export interface PackageOutput {
  template: CloudFormationTemplate;
  /** File names inside each function's zip, by function name. */
  zips: Record<string, string[]>;
  stdout: string;
}

export interface CloudFormationTemplate {
  Resources: Record<
    string,
    { Type: string; Properties?: Record<string, unknown>; DependsOn?: unknown; Condition?: string }
  >;
  Outputs?: Record<string, unknown>;
  Conditions?: Record<string, unknown>;
}

/**
 * `osls package` in the copy, with `--param` settings; its output stays in `<dir>/.serverless` (a
 * later run replaces it).
 */
export async function packageService(
  copy: ServiceCopy,
  stage: string,
  functions: string[],
  params: Record<string, string> = {},
): Promise<PackageOutput> {
  const home = join(copy.dir, "home");
  mkdirSync(home, { recursive: true });
  const cli = join(repoRoot, "node_modules/osls/bin/serverless.js");
  const args = [cli, "package", "--stage", stage];
  for (const [name, value] of Object.entries(params)) args.push(`--param=${name}=${value}`);
  const { stdout } = await run(process.execPath, args, {
    cwd: copy.dir,
    env: offlineEnv(home),
    timeout: 45_000,
  });
  const out = join(copy.dir, ".serverless");
  const template = JSON.parse(
    readFileSync(join(out, "cloudformation-template-update-stack.json"), "utf8"),
  ) as CloudFormationTemplate;
  const zips: Record<string, string[]> = {};
  for (const name of functions) zips[name] = zipEntries(readFileSync(join(out, `${name}.zip`)));
  return { template, zips, stdout };
}

/** The file names in a zip, read from its central directory (found through the end record). */
export function zipEntries(zip: Buffer): string[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error("not a zip: no end of central directory record");
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`zip central directory entry ${i} is damaged`);
    const nameLength = zip.readUInt16LE(at + 28);
    names.push(zip.toString("utf8", at + 46, at + 46 + nameLength));
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return names.sort();
}
