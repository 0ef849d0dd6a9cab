/**
 * nimbusq/nestjs on each Nest major it declares (issue 25): the packed tarball installed beside that
 * Nest in a project of its own, an app compiled with tsc as Nest apps are (decorators, metadata), and
 * run: a `@Processor` extending `WorkerHost` with an injected service processes a job added through an
 * `@InjectQueue` queue, over the test run's REST server.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type ConsumerProject,
  consumerProject,
  npmInstall,
  pinned,
  run,
} from "../packaging/consumer-project.ts";
import { uniquePrefix } from "../support/stack.ts";

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
