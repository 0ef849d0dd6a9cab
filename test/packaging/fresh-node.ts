/**
 * Runs a bundle in a fresh `node` process, as Lambda's runtime would load it: measures the import,
 * optionally calls the handler once with an event, and reports back as JSON on stdout.
 */
import { execFile } from "node:child_process";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

// Runs as the child's `--input-type=module` script. Module specifiers resolve from the child's cwd,
// the service copy outside the repository, so `sdkResolvable` says whether the AWS SDK could be found.
const script = `
const started = performance.now();
const bundle = await import(process.env.NQ_BUNDLE);
const importMs = performance.now() - started;
const sdkResolvable = await import("@aws-sdk/client-lambda").then(() => true, () => false);
let result;
if (process.env.NQ_EVENT) {
  const context = {
    functionName: "fresh-node", awsRequestId: "fresh-node-request", getRemainingTimeInMillis: () => 10000,
  };
  result = await bundle.handler(JSON.parse(process.env.NQ_EVENT), context);
}
console.log(JSON.stringify({ importMs, handlerType: typeof bundle.handler, sdkResolvable, result }));
// A TCP connection (Redis over TCP) would keep the process alive, as a warm Lambda container is.
process.exit(0);
`;

export interface FreshImport<T = unknown> {
  importMs: number;
  handlerType: string;
  sdkResolvable: boolean;
  result: T;
}

export async function importInFreshNode<T = unknown>(
  bundle: string,
  options: { cwd: string; env: Record<string, string>; event?: unknown },
): Promise<FreshImport<T>> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    ...options.env,
    NQ_BUNDLE: pathToFileURL(bundle).href,
    ...(options.event !== undefined ? { NQ_EVENT: JSON.stringify(options.event) } : {}),
  };
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    cwd: options.cwd,
    env,
    timeout: 20_000,
  });
  const last = stdout.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last) as FreshImport<T>;
}
