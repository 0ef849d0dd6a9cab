/**
 * nimbusq/nestjs on each Nest major it declares (issue 25): the packed tarball installed beside that
 * Nest in a project of its own, an app compiled with tsc as Nest apps are (decorators, metadata), and
 * run: a `@Processor` extending `WorkerHost` with an injected service processes a job added through an
 * `@InjectQueue` queue, over the test run's REST server. And examples/nestjs-email, run with the
 * commands of its README beside the same tarball.
 */
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Queue } from "../../core/index.ts";
import {
  type ConsumerProject,
  consumerProject,
  npmInstall,
  pinned,
  run,
} from "../packaging/consumer-project.ts";
import { repoRoot } from "../packaging/service.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";
import { until } from "../support/waiting.ts";

const appSource = `
import "reflect-metadata";
import { Injectable, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { ActiveJob, Queue } from "nimbusq";
import { InjectQueue, NimbusqModule, Processor, WorkerHost } from "nimbusq/nestjs";

@Injectable()
export class Greeter {
  greet(name: string): string {
    return \`hello \${name}\`;
  }
}

@Processor("greetings", { autorun: false })
export class GreetingProcessor extends WorkerHost {
  constructor(private readonly greeter: Greeter) {
    super();
  }
  async process(job: ActiveJob<{ name: string }>): Promise<string> {
    return this.greeter.greet(job.data.name);
  }
}

@Injectable()
export class Sender {
  constructor(@InjectQueue("greetings") readonly queue: Queue<{ name: string }>) {}
}

@Module({
  imports: [
    NimbusqModule.forRoot({ prefix: process.env.NQ_PREFIX as string }),
    NimbusqModule.registerQueue({ name: "greetings" }),
  ],
  providers: [Greeter, GreetingProcessor, Sender],
})
export class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const sender = app.get(Sender);
const job = await sender.queue.add("hi", { name: "nest" });
const summary = await app.get(GreetingProcessor).worker.drain();
const done = await sender.queue.getJob(job.id);
const nest = JSON.parse((await import("node:fs")).readFileSync("node_modules/@nestjs/core/package.json", "utf8"));
console.log(JSON.stringify({ nest: nest.version, completed: summary.completed, returnvalue: done?.returnvalue }));
await app.close();
`;

const tsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    skipLibCheck: true,
    outDir: "dist",
    types: ["node"],
  },
  files: ["app.ts"],
};

let project: ConsumerProject;
beforeAll(async () => {
  project = await consumerProject();
}, 240_000);
afterAll(() => project?.remove());

/** The app's project beside one Nest major: the tarball, that Nest, tsc; compiled and run. */
async function runOnNest(major: number): Promise<{ nest: string; completed: number; returnvalue: unknown }> {
  const dir = join(project.root, `nest${major}`);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: `nest${major}`, private: true, type: "module" }),
  );
  await npmInstall(dir, [
    project.tarball,
    `@nestjs/common@${major}`,
    `@nestjs/core@${major}`,
    "reflect-metadata@0.2",
    "rxjs@7",
    `typescript@${pinned("typescript")}`,
    `@types/node@${pinned("@types/node")}`,
  ]);
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
  writeFileSync(join(dir, "app.ts"), appSource);
  await run(process.execPath, [join(dir, "node_modules/typescript/bin/tsc"), "-p", "."], { cwd: dir });
  const env = {
    ...process.env,
    UPSTASH_REDIS_REST_URL: inject("restUrl"),
    UPSTASH_REDIS_REST_TOKEN: inject("restToken"),
    NQ_PREFIX: uniquePrefix(`nest${major}`),
  };
  const { stdout } = await run(process.execPath, ["dist/app.js"], { cwd: dir, env });
  return JSON.parse(stdout.trim().split("\n").at(-1) as string);
}

describe("nimbusq/nestjs on each Nest major", () => {
  for (const major of [10, 11, 12]) {
    it(`Nest ${major}: installs beside it, compiles with tsc and runs a WorkerHost with an injected service`, async () => {
      const result = await runOnNest(major);
      expect(result.nest.startsWith(`${major}.`)).toBe(true);
      expect(result).toMatchObject({ completed: 1, returnvalue: "hello nest" });
    }, 240_000);
  }
});

/** `npm start` of the example: resolves with the URL it prints once it listens. */
function startExample(dir: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ["dist/main.js"], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the example did not start:\n${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (\S+)/.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`the example exited (${code}):\n${output}`)));
  });
  // Nest's shutdown hooks close the app, then re-raise the signal: a clean stop ends by SIGTERM.
  const stop = () =>
    new Promise<string>((resolve) => {
      child.once("exit", (code, signal) => resolve(signal ?? `exit ${code}`));
      child.kill("SIGTERM");
    });
  return { listening, stop };
}

describe("examples/nestjs-email", () => {
  it("runs with the commands of its README: install, build, start, POST /send-email, the job completes", async () => {
    const dir = join(project.root, "nestjs-email");
    cpSync(join(repoRoot, "examples/nestjs-email"), dir, {
      recursive: true,
      filter: (source) => !/[\\/](node_modules|dist|nimbusq\.tgz)$/.test(source),
    });
    // What `npm run pack-nimbusq` makes: `npm pack` of the repository, as nimbusq.tgz.
    copyFileSync(project.tarball, join(dir, "nimbusq.tgz"));
    await npmInstall(dir, []);
    await run("npm", ["run", "build"], { cwd: dir });
    const prefix = uniquePrefix("nestex");
    const example = startExample(dir, {
      ...process.env,
      UPSTASH_REDIS_REST_URL: inject("restUrl"),
      UPSTASH_REDIS_REST_TOKEN: inject("restToken"),
      NIMBUSQ_PREFIX: prefix,
      PORT: "0",
    });
    try {
      const port = new URL(await example.listening).port;
      const answer = await fetch(`http://127.0.0.1:${port}/send-email`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ to: "ada@example.com", subject: "hello" }),
      });
      expect(answer.status).toBe(202);
      const { jobId } = (await answer.json()) as { jobId: string };
      const queue = new Queue("nest-email", { redis: sharedRedis(), prefix });
      const done = await until("the example's job to complete", async () => {
        const job = await queue.getJob(jobId);
        return job?.finishedOn ? job : undefined;
      });
      expect(done.failedReason).toBeUndefined();
    } finally {
      expect(await example.stop()).toMatch(/^(SIGTERM|exit 0)$/);
    }
  }, 240_000);
});
