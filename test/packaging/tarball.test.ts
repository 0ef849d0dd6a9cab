/**
 * The package as a user gets it: `npm pack` (its `prepack` builds dist/), installed with npm into an
 * empty project outside the repository (see consumer-project.ts). There, plain `node` adds and runs
 * jobs, a strict TypeScript project compiles against the shipped types, esbuild bundles producers for
 * Lambda and for an edge platform, and the edge bundle adds a job inside a real edge runtime
 * (`edge-runtime`, Vercel's). All against the test run's REST server and redis-server.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EdgeRuntime } from "edge-runtime";
import { build, type Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sqsEvent } from "../support/aws-events.ts";
import { directConnectionForFile, uniquePrefix } from "../support/stack.ts";
import {
  type ConsumerProject,
  consumerProject,
  filesUnder,
  npmInstall,
  type Ran,
  run,
} from "./consumer-project.ts";
import { importInFreshNode } from "./fresh-node.ts";
import { repoRoot } from "./service.ts";

const raw = directConnectionForFile();
const prefix = uniquePrefix("tarball");
const started = performance.now();
let project: ConsumerProject;
let typecheck: Promise<Ran>;

// Only what a type-checked user program would write: every entry point, typed options, a typed
// processor, and one misuse that must not compile (were the types `any`, the directive would fail).
const consumerSource = `
import { createRedis, type Job, type JobsOptions, Queue, ValidationError, Worker } from "nimbusq";
import { type CronParser, CronParserMissingError, cronParser, registerCronParser } from "nimbusq/cron";
import { createHttpApp, sqsProducer, sweeperHandler, workerHandler } from "nimbusq/functions";

interface Email { to: string }
const redis = createRedis({ url: "https://example.upstash.io", token: "token" });
const queue = new Queue<Email>("email", { redis });

export async function enqueue(to: string): Promise<Job<Email>> {
  const opts: JobsOptions = { attempts: 3, backoff: { type: "exponential", delay: 1000 } };
  return await queue.add("send", { to }, opts);
}
// @ts-expect-error the queue's data type is Email
export const wrong = () => queue.add("send", { from: 1 });

export const worker = workerHandler<Email, string>({ queue: "email", processor: async (job) => job.data.to });
export const producer = sqsProducer({ queue: "email", map: (record) => ({ name: "send", data: { to: record.body } }) });
export const sweeper = sweeperHandler({ queues: ["email"] });
export const app = createHttpApp({ redis, tokens: ["token"] });
export const inProcess = new Worker<Email>("email", async (job) => job.data.to, { redis });
const parser: CronParser = cronParser;
registerCronParser(parser);
export const errors = [ValidationError, CronParserMissingError];
`;

const tsconfig = {
  compilerOptions: {
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
  },
  files: ["consumer.ts"],
};

// Plain node: add a job with the Queue, run it with the worker Lambda's handler, read it back.
const plainSource = `
import { createRedis, Queue, Worker } from "nimbusq";
import { workerHandler } from "nimbusq/functions";

const { NQ_URL: url, NQ_TOKEN: token, NQ_PREFIX: prefix } = process.env;
const redis = createRedis({ url, token });
const queue = new Queue("plain", { redis, prefix });
const added = await queue.add("double", { n: 21 });
const processor = async (job) => job.data.n * 2;
const handler = workerHandler({ queue: "plain", redis, prefix, processor, jobTimeoutMs: 5_000 });
const context = { getRemainingTimeInMillis: () => 20_000, functionName: "plain", awsRequestId: "plain-1" };
const summary = await handler({ queue: "plain" }, context);
const job = await queue.getJob(added.id);
// A processor file (BullMQ's sandboxed processor) runs in a worker thread of the installed package.
const threaded = await queue.add("triple", { n: 7 });
const worker = new Worker("plain", "./triple.mjs", { redis, prefix });
await worker.drain();
await worker.close();
const tripled = (await queue.getJob(threaded.id)).returnvalue;
console.log(JSON.stringify({ id: added.id, state: await job.getState(), returnvalue: job.returnvalue, summary, tripled }));
`;

// The producers bundled below only add jobs: no scheduler code may come with them.
const lambdaSource = `
import { sqsProducer } from "nimbusq/functions";

export const handler = sqsProducer({
  queue: "lambda",
  prefix: process.env.NIMBUSQ_PREFIX,
  map: (record) => ({ name: "from-sqs", data: JSON.parse(record.body) }),
});
`;

// Runs in the edge runtime: adds a job, then shows what a cron pattern does without nimbusq/cron.
const edgeSource = `
import { createRedis, Queue } from "nimbusq";

addEventListener("fetch", (event) => {
  event.respondWith((async () => {
    const { url, token, prefix } = await event.request.json();
    const queue = new Queue("edge", { redis: createRedis({ url, token }), prefix });
    const job = await queue.add("hello", { from: "edge" });
    const cron = await queue.upsertJobScheduler("nightly", { pattern: "0 3 * * *" }).then(
      () => "upserted",
      (error) => error.name + ": " + error.message,
    );
    return Response.json({ id: job.id, cron, hasProcess: typeof process !== "undefined" });
  })());
});
`;

const edgeCronSource = `
import "nimbusq/cron";
import { createRedis, Queue } from "nimbusq";

addEventListener("fetch", (event) => {
  event.respondWith((async () => {
    const { url, token, prefix } = await event.request.json();
    const queue = new Queue("edge", { redis: createRedis({ url, token }), prefix });
    const job = await queue.upsertJobScheduler("nightly", { pattern: "0 3 * * *", tz: "Europe/Berlin" });
    return Response.json({ id: job.id });
  })());
});
`;

interface Bundle {
  file: string;
  text: string;
  bytes: number;
  /** Input packages (node_modules/<name>) that put bytes into the bundle. */
  packages: string[];
  externals: string[];
}

/** esbuild, run as a user would in the project: `nimbusq` resolves from its node_modules. */
async function bundle(entry: string, platform: "node" | "neutral"): Promise<Bundle> {
  const file = join(project.root, "out", platform, entry.replace(/\.mjs$/, ".bundle.mjs"));
  const result = await build({
    absWorkingDir: project.dir,
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    format: "esm",
    platform,
    target: platform === "node" ? "node20" : "es2022",
    minify: true,
    metafile: true,
    logLevel: "silent",
    // On Lambda the runtime has the AWS SDK (AWS's advice: leave it out); an edge platform's
    // conditions are the ones Vercel's and Cloudflare's bundlers pass.
    ...(platform === "node"
      ? { external: ["@aws-sdk/*"] }
      : { conditions: ["worker", "browser"], mainFields: ["module", "main"] }),
  });
  const text = readFileSync(file, "utf8");
  return { file, text, bytes: Buffer.byteLength(text), ...contents(result.metafile) };
}

function contents(metafile: Metafile): Pick<Bundle, "packages" | "externals"> {
  const packages = new Set<string>();
  const externals = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1];
      if (name && bytesInOutput > 0) packages.add(name);
    }
    for (const imported of output.imports) if (imported.external) externals.add(imported.path);
  }
  return { packages: [...packages].sort(), externals: [...externals].sort() };
}

const rest = () => ({ url: inject("restUrl"), token: inject("restToken") });
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

beforeAll(async () => {
  project = await consumerProject();
  project.write("tsconfig.json", JSON.stringify(tsconfig));
  project.write("consumer.ts", consumerSource);
  // The strict compile is the slowest step: it runs while the other tests do.
  typecheck = run(process.execPath, [join(project.dir, "node_modules/typescript/bin/tsc"), "-p", "."], {
    cwd: project.dir,
  });
  typecheck.catch(() => {});
}, 240_000);

afterAll(() => {
  project?.remove();
  const { packMs = 0, installMs = 0 } = project?.timings ?? {};
  console.log(
    `tarball test: npm pack ${Math.round(packMs)} ms, npm install ${Math.round(installMs)} ms, ` +
      `all ${Math.round(performance.now() - started)} ms`,
  );
});

describe("the tarball", () => {
  it("ships the built JavaScript and its types, and installs its dependencies but not the AWS SDK", () => {
    const installed = join(project.dir, "node_modules");
    const shipped = filesUnder(join(installed, "nimbusq"));
    const other = shipped.filter((file) => !/^dist\/.+\.(js|d\.ts)$/.test(file));
    expect(other.sort()).toEqual(["LICENSE", "README.md", "package.json"]);
    for (const entry of ["dist/core/index.js", "dist/core/index.d.ts", "dist/functions/index.js"]) {
      expect(shipped).toContain(entry);
    }
    expect(shipped.filter((file) => /(^|\/)(test|infra|lua)\//.test(file))).toEqual([]);
    // The demo (examples/demo: queues, workers, producer) and the deployable entries are the repo's,
    // not the package's: no file of theirs ships, and no shipped module imports one.
    expect(shipped.filter((file) => /(^|\/)(examples|entries)\/|demo/i.test(file))).toEqual([]);
    const importsDemo = shipped
      .filter((file) => file.endsWith(".js"))
      .filter((file) =>
        /(from|import)\s*\(?\s*["'][^"']*(examples\/|entries\/|demo)/.test(
          readFileSync(join(installed, "nimbusq", file), "utf8"),
        ),
      );
    expect(importsDemo).toEqual([]);
    const present = (name: string) => filesUnder(installed).some((file) => file.startsWith(`${name}/`));
    for (const name of ["@upstash/redis", "hono", "cron-parser", "@types/aws-lambda"]) {
      expect(present(name), name).toBe(true);
    }
    // Optional peers: the Lambda runtime has them; npm installs them for nobody.
    const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const shippedManifest = manifest(join(installed, "nimbusq"));
    for (const name of ["@aws-sdk/client-lambda", "@aws-sdk/client-eventbridge", "@aws-sdk/client-ssm"]) {
      expect(present(name), name).toBe(false);
      expect(shippedManifest.dependencies?.[name], name).toBeUndefined();
      expect(shippedManifest.peerDependenciesMeta?.[name], name).toEqual({ optional: true });
    }
    expect(shippedManifest.exports).toEqual(manifest(repoRoot).exports);
  });

  it("declares ranges: beside an app's own zod, hono and @upstash/redis (other patch levels) npm keeps one copy of each", async () => {
    const manifest = JSON.parse(readFileSync(join(project.dir, "node_modules/nimbusq/package.json"), "utf8"));
    for (const [name, range] of Object.entries(manifest.dependencies as Record<string, string>))
      expect(range, name).toMatch(/^\^\d/);
    const app = join(project.root, "app-with-its-own");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "own", private: true, type: "module" }));
    const own = ["zod@4.6.6", "hono@4.13.18", "@upstash/redis@1.38.4"];
    await npmInstall(app, own);
    await npmInstall(app, [project.tarball]);
    const { stdout } = await run("npm", ["ls", "--all", "--json", "zod", "hono", "@upstash/redis"], {
      cwd: app,
    });
    const versions = new Map<string, Set<string>>();
    const walk = (deps: Record<string, { version: string; dependencies?: object }> | undefined) => {
      for (const [name, info] of Object.entries(deps ?? {})) {
        if (["zod", "hono", "@upstash/redis"].includes(name))
          versions.set(name, new Set([...(versions.get(name) ?? []), info.version]));
        walk(info.dependencies as typeof deps);
      }
    };
    walk(JSON.parse(stdout).dependencies);
    expect(Object.fromEntries([...versions].map(([name, set]) => [name, [...set]]))).toEqual({
      zod: ["4.6.6"],
      hono: ["4.13.18"],
      "@upstash/redis": ["1.38.4"],
    });
    // And it runs on them: the package and its functions (the HTTP app: hono, zod) load and build.
    const probe = `import("nimbusq/functions").then(({ createHttpApp }) => {
      createHttpApp({ redis: { evalsha() {}, eval() {}, hgetall() {} }, tokens: ["t"] });
      console.log("ok");
    })`;
    const { stdout: loaded } = await run(process.execPath, ["--input-type=module", "-e", probe], {
      cwd: app,
    });
    expect(loaded.trim()).toBe("ok");
  });

  it("runs in plain node: nimbusq adds a job, nimbusq/functions' worker handler runs it", async () => {
    project.write("plain.mjs", plainSource);
    project.write("triple.mjs", "export default async (job) => job.data.n * 3;\n");
    const env = { ...process.env, NQ_URL: rest().url, NQ_TOKEN: rest().token, NQ_PREFIX: prefix };
    const { stdout } = await run(process.execPath, ["plain.mjs"], { cwd: project.dir, env });
    const result = JSON.parse(stdout.trim().split("\n").at(-1) as string);
    expect(result).toMatchObject({
      state: "completed",
      returnvalue: 42,
      summary: { queue: "plain" },
      tripled: 21,
    });
    expect(await raw.hget(`${prefix}:plain:${result.id}`, "returnvalue")).toBe("42");
  });

  it("installs the operator CLI: npx nimbusq lists the queue the plain-node test used", async () => {
    const bin = join(project.dir, "node_modules", ".bin", "nimbusq");
    const env = {
      ...process.env,
      UPSTASH_REDIS_REST_URL: rest().url,
      UPSTASH_REDIS_REST_TOKEN: rest().token,
    };
    const { stdout } = await run(bin, ["queues", "--json", "--prefix", prefix], { cwd: project.dir, env });
    expect(JSON.stringify(JSON.parse(stdout))).toContain('"plain"');
  });

  it("types resolve in a module: commonjs TypeScript project too (main, types, typesVersions)", async () => {
    const cjs = join(project.root, "cjs-app");
    mkdirSync(cjs, { recursive: true });
    writeFileSync(
      join(cjs, "index.ts"),
      'import { Queue, type ActiveJob } from "nimbusq";\nimport { workerHandler } from "nimbusq/functions";\n' +
        'import { NimbusqModule } from "nimbusq/nestjs";\n' +
        "export const parts = [Queue, workerHandler, NimbusqModule];\nexport type Job = ActiveJob;\n",
    );
    writeFileSync(
      join(cjs, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "commonjs",
          target: "ES2022",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        files: ["index.ts"],
      }),
    );
    // Resolved from the consumer project's node_modules (the folder sits beside it, under the same root).
    writeFileSync(join(cjs, "package.json"), JSON.stringify({ name: "cjs-app", private: true }));
    await run("ln", ["-s", join(project.dir, "node_modules"), join(cjs, "node_modules")], { cwd: cjs });
    await run(process.execPath, [join(project.dir, "node_modules/typescript/bin/tsc"), "-p", "."], {
      cwd: cjs,
    });
    expect(readFileSync(join(project.dir, "node_modules/nimbusq/LICENSE"), "utf8")).toMatch(/^MIT License/);
  });

  it("loads with require() too, where node can require ES modules", async () => {
    const script = `const { Queue } = require("nimbusq"); const { workerHandler } = require("nimbusq/functions");
      console.log(typeof Queue, typeof workerHandler);`;
    const requireModule = (process.features as { require_module?: boolean }).require_module === true;
    if (!requireModule) return;
    const { stdout } = await run(process.execPath, ["-e", script], { cwd: project.dir });
    expect(stdout.trim()).toBe("function function");
  });

  it("type-checks a strict nodenext consumer of every entry point (skipLibCheck off)", async () => {
    await expect(typecheck).resolves.toBeDefined();
  }, 120_000);
});

describe("bundles of the installed package", () => {
  let edge: Bundle;

  it("for Lambda: a producer from nimbusq/functions, self-contained, without scheduler code", async () => {
    project.write("lambda.mjs", lambdaSource);
    const lambda = await bundle("lambda.mjs", "node");
    expect(lambda.packages).toEqual(["@upstash/redis", "nimbusq", "uncrypto"]);
    // Only what Lambda's Node runtime provides, loaded only when a secret comes from SSM (`…_PARAM`):
    // the bundle runs below from a folder with no node_modules at all.
    expect(lambda.externals.filter((name) => !name.startsWith("node:"))).toEqual(["@aws-sdk/client-ssm"]);
    console.log(`Lambda producer bundle: ${kb(lambda.bytes)} (${lambda.packages.join(", ")})`);

    // Loaded from outside the project, where no node_modules can be found.
    const event = sqsEvent([{ body: JSON.stringify({ n: 1 }) }, { body: "not json" }]);
    const env = { UPSTASH_REDIS_REST_URL: rest().url, UPSTASH_REDIS_REST_TOKEN: rest().token };
    const answer = await importInFreshNode<{ batchItemFailures: { itemIdentifier: string }[] }>(lambda.file, {
      cwd: project.root,
      env: { ...env, NIMBUSQ_PREFIX: prefix },
      event,
    });
    expect(answer.result.batchItemFailures).toEqual([{ itemIdentifier: event.Records[1]?.messageId }]);
    const waiting = await raw.lrange(`${prefix}:lambda:wait`, 0, -1);
    expect(waiting).toHaveLength(1);
    expect(await raw.hget(`${prefix}:lambda:${waiting[0]}`, "name")).toBe("from-sqs");
  });

  it("for an edge platform: a plain add has no Node built-ins and no cron-parser or luxon", async () => {
    project.write("edge.mjs", edgeSource);
    edge = await bundle("edge.mjs", "neutral");
    expect(edge.externals).toEqual([]);
    expect(edge.packages).toEqual(["@upstash/redis", "nimbusq", "uncrypto"]);
    expect(edge.text).not.toMatch(/\bluxon\b|Invalid DateTime/);
    console.log(`edge plain-add bundle: ${kb(edge.bytes)} (${edge.packages.join(", ")})`);
  });

  it("adds a job inside a real edge runtime; a cron pattern there asks for nimbusq/cron", async () => {
    const runtime = new EdgeRuntime({ initialCode: edge.text });
    const response = await runtime.dispatchFetch("http://edge.test/", {
      method: "POST",
      body: JSON.stringify({ ...rest(), prefix }),
    });
    await response.waitUntil();
    const answer = (await response.json()) as { id: string; cron: string; hasProcess: boolean };
    expect(answer.hasProcess).toBe(false);
    expect(await raw.hget(`${prefix}:edge:${answer.id}`, "name")).toBe("hello");
    expect(await raw.lrange(`${prefix}:edge:wait`, 0, -1)).toContain(answer.id);
    expect(answer.cron).toMatch(/^CronParserMissingError: .*import "nimbusq\/cron"/);
    expect(await raw.exists(`${prefix}:edge:repeat:nightly`)).toBe(0);
  });

  it("with nimbusq/cron: the parser comes along and a cron scheduler upserts in the edge runtime", async () => {
    project.write("edge-cron.mjs", edgeCronSource);
    const withCron = await bundle("edge-cron.mjs", "neutral");
    expect(withCron.externals).toEqual([]);
    expect(withCron.packages).toEqual(expect.arrayContaining(["cron-parser", "luxon"]));
    console.log(`edge bundle with nimbusq/cron: ${kb(withCron.bytes)} (plain add ${kb(edge.bytes)})`);
    const runtime = new EdgeRuntime({ initialCode: withCron.text });
    const response = await runtime.dispatchFetch("http://edge.test/", {
      method: "POST",
      body: JSON.stringify({ ...rest(), prefix }),
    });
    await response.waitUntil();
    const { id } = (await response.json()) as { id: string };
    expect(id).toMatch(/^repeat:nightly:\d+$/);
    expect(await raw.hget(`${prefix}:edge:repeat:nightly`, "tz")).toBe("Europe/Berlin");
  });
});
