/**
 * A copy of the service in a temporary directory, outside the repository: serverless.yml and freshly
 * built bundles. Packaging and importing happen there, so the repository stays clean and a bundle
 * cannot reach the repository's node_modules (the AWS SDK among them).
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type BundleReport, bundleFunctions } from "../../infra/build/bundle.ts";

const run = promisify(execFile);

export const repoRoot = resolve(import.meta.dirname, "../..");

export interface ServiceCopy {
  dir: string;
  bundles: BundleReport[];
  remove(): void;
}

export async function serviceCopy(): Promise<ServiceCopy> {
  const dir = mkdtempSync(join(tmpdir(), "nimbusq-packaging-"));
  copyFileSync(join(repoRoot, "serverless.yml"), join(dir, "serverless.yml"));
  const bundles = await bundleFunctions({ root: repoRoot, outDir: join(dir, "build/lambda") });
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
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown>; DependsOn?: unknown }>;
  Outputs?: Record<string, unknown>;
}

/** `osls package` in the copy; its output stays in `<dir>/.serverless`. */
export async function packageService(
  copy: ServiceCopy,
  stage: string,
  functions: string[],
): Promise<PackageOutput> {
  const home = join(copy.dir, "home");
  mkdirSync(home);
  const cli = join(repoRoot, "node_modules/osls/bin/serverless.js");
  const { stdout } = await run(process.execPath, [cli, "package", "--stage", stage], {
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
