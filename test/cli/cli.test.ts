/**
 * The operator CLI as its users run it: a child process with the Upstash URL and token in its
 * environment, against the test run's REST server, on jobs made by core's Queue and Worker. Each
 * command's `--json` answer is parsed whole and checked against what core reads back; tables are
 * checked for their lines; usage errors exit 2, failed operations 1.
 *
 * To keep the file fast, most runs use one esbuild bundle of cli/main.ts run by plain `node` (a tsx
 * child costs about a second); one run goes through tsx from the source, as `npx tsx cli/main.ts`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Queue, ValidationError, Worker } from "../../core/index.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const redis = sharedRedis();
const direct = directConnectionForFile();
const prefix = uniquePrefix("cli");
const secret = "hunter2-secret";

let outDir: string;
let bundle: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `env` replaces the Upstash variables (undefined removes one). */
function cli(args: string[], env: Record<string, string | undefined> = {}, viaTsx = false): Promise<Run> {
  const merged: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    UPSTASH_REDIS_REST_URL: inject("restUrl"),
    UPSTASH_REDIS_REST_TOKEN: inject("restToken"),
    NIMBUSQ_PREFIX: prefix,
    ...env,
  };
  const childEnv = Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const [file, argv] = viaTsx
    ? ["node_modules/.bin/tsx", ["cli/main.ts", ...args]]
    : [process.execPath, [bundle, ...args]];
  return new Promise((resolve) => {
    execFile(file, argv, { env: childEnv, timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error ? Number((error as { code?: unknown }).code ?? 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function json<T>(args: string[]): Promise<T> {
  const run = await cli([...args, "--json"]);
  // `queues` SCANs the whole database the test files share: past 25,000 keys it shows its progress.
  const unexpected = run.stderr.split("\n").filter((line) => line !== "" && !/^scanning keys: /.test(line));
  expect({ code: run.code, stderr: unexpected }).toEqual({ code: 0, stderr: [] });
  return JSON.parse(run.stdout) as T;
}

const mail = new Queue("mail", { redis, prefix });
const dlq = new Queue("mail-dlq", { redis, prefix });
let failedIds: string[] = [];
let completedIds: string[] = [];

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), "nimbusq-cli-"));
  bundle = join(outDir, "nimbusq.mjs");
  await build({
    entryPoints: ["cli/main.ts"],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: bundle,
    logLevel: "error",
  });

  const opts = { attempts: 1, deadLetter: { queue: "mail-dlq" } };
  await mail.addBulk([0, 1, 2, 3].map((i) => ({ name: `send-${i}`, data: { i, password: secret }, opts })));
  const worker = new Worker(
    "mail",
    async (job) => {
      await job.log("tried once");
      if ((job.data as { i: number }).i % 2 === 1) throw new Error(`mailbox ${job.id} is full`);
      return "sent";
    },
    { redis, prefix, batchSize: 10 },
  );
  worker.on("error", () => {});
  await worker.drain();
  failedIds = (await mail.getFailed()).map((job) => job.id).sort();
  completedIds = (await mail.getCompleted()).map((job) => job.id).sort();
  await mail.add("later", { password: secret }, { delay: 3_600_000 });
  await mail.upsertJobScheduler(
    "nightly",
    { pattern: "0 3 * * *", tz: "Europe/Paris" },
    {
      name: "report",
      data: { password: secret },
    },
  );
  // What a BullMQ worker with `metrics` on keeps (nimbusq's workers keep none).
  const minute = 60_000;
  await direct.hset(`${prefix}:mail:metrics:completed`, { count: 9, prevTS: 10 * minute, prevCount: 9 });
  await direct.rpush(`${prefix}:mail:metrics:completed:data`, 4, 5);
  await new Queue("idle", { redis, prefix }).pause();
}, 60_000);

afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
});

interface QueueRow {
  name: string;
  paused: boolean;
  counts: Record<string, number>;
}

describe("nimbusq CLI", () => {
  it("reads: queues, jobs, job, schedulers, metrics (--json and tables)", async () => {
    const [queues, queueTable, jobs, failedTable, one, schedulers, metrics] = await Promise.all([
      json<{ prefix: string; queues: QueueRow[]; scan: { complete: boolean } }>(["queues"]),
      cli(["queues"]),
      json<{ jobs: { id: string; state: string; name: string; failedReason: string | null }[] }>([
        "jobs",
        "mail",
      ]),
      cli(["jobs", "mail", "failed"]),
      json<{ id: string; state: string; data: unknown; logs: number; failedReason: string }>([
        "job",
        "mail",
        failedIds[0] as string,
      ]),
      json<{ count: number; schedulers: Record<string, unknown>[] }>(["schedulers", "mail"]),
      json<{ meta: { count: number }; data: number[] }>(["metrics", "mail", "completed"]),
    ]);

    expect(queues.prefix).toBe(prefix);
    expect(queues.scan.complete).toBe(true);
    const byName = Object.fromEntries(queues.queues.map((row) => [row.name, row]));
    expect(Object.keys(byName).sort()).toEqual(["idle", "mail", "mail-dlq"]);
    expect(byName.mail?.counts).toEqual({
      waiting: 0,
      prioritized: 0,
      delayed: 2, // the delayed job and the scheduler's iteration
      active: 0,
      "waiting-children": 0,
      completed: 2,
      failed: 2,
    });
    expect(byName["mail-dlq"]?.counts.waiting).toBe(2);
    expect(byName.idle?.paused).toBe(true);
    expect(byName.mail?.paused).toBe(false);
    const lines = queueTable.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^QUEUE\s+PAUSED\s+WAITING\s+PRIORITIZED\s+DELAYED\s+ACTIVE\s+WAITING-CHILDREN/);
    expect(lines.find((line) => line.startsWith("idle "))).toMatch(/^idle\s+yes(\s+0){7}$/);
    expect(lines.find((line) => line.startsWith("mail "))).toMatch(/^mail\s+no\s+0\s+0\s+2\s+0\s+0\s+2\s+2$/);

    expect(jobs.jobs).toHaveLength(6);
    const states = Object.fromEntries(jobs.jobs.map((job) => [job.id, job.state]));
    for (const id of failedIds) expect(states[id]).toBe("failed");
    for (const id of completedIds) expect(states[id]).toBe("completed");
    expect(jobs.jobs.filter((job) => job.state === "delayed").map((job) => job.name)).toEqual(
      expect.arrayContaining(["later", "report"]),
    );
    expect(failedTable.code).toBe(0);
    const failedLines = failedTable.stdout.trimEnd().split("\n");
    expect(failedLines[0]).toMatch(
      /^ID\s+NAME\s+STATE\s+CREATED\s+STARTED\s+FINISHED\s+ATTEMPTS\s+FAILED REASON$/,
    );
    expect(failedLines).toHaveLength(3);
    expect(failedLines[1]).toMatch(/failed .* 1\/1 {2}mailbox \d+ is full$/);
    // Listings never show job data, nor do schedulers (their template's data).
    for (const text of [queueTable.stdout, failedTable.stdout, JSON.stringify([jobs, schedulers])])
      expect(text).not.toContain(secret);

    expect(one).toMatchObject({ id: failedIds[0], state: "failed", logs: 1 });
    expect(one.data).toEqual({ i: expect.any(Number), password: secret });
    expect(one.failedReason).toBe(`mailbox ${failedIds[0]} is full`);

    expect(schedulers.count).toBe(1);
    expect(schedulers.schedulers[0]).toMatchObject({ key: "nightly", name: "report", pattern: "0 3 * * *" });
    expect(metrics.meta.count).toBe(9);
    expect(metrics.data).toEqual([4, 5]);
  });

  it("changes: pause, resume, retry, redrive, clean", async () => {
    // The one run from the source through tsx, as `npx tsx cli/main.ts`.
    const paused = await cli(["pause", "mail", "--json"], {}, true);
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ queue: "mail", paused: true });
    expect(await mail.isPaused()).toBe(true);
    const resumed = await cli(["resume", "mail"]);
    expect(resumed).toEqual({ code: 0, stdout: 'resumed queue "mail"\n', stderr: "" });
    expect(await mail.isPaused()).toBe(false);

    expect(await json(["retry", "mail"])).toEqual({ queue: "mail", state: "failed", retried: 2 });
    expect(await mail.getJobCounts("failed", "waiting")).toEqual({ failed: 0, waiting: 2 });

    // The retried jobs' dead letters are dropped, not redriven: the same work would run twice.
    const redriven = await json<{ redriven: number; left: number }>(["redrive", "mail"]);
    expect(redriven).toEqual({ queue: "mail", from: "mail-dlq", redriven: 0, left: 0 });
    expect(await mail.count("waiting")).toBe(2);
    expect(await dlq.count("waiting")).toBe(0);

    expect(await json(["clean", "mail", "completed"])).toEqual({
      queue: "mail",
      state: "completed",
      grace: 0,
      deleted: 2,
    });
    expect(await mail.count("completed")).toBe(0);
    for (const id of completedIds) expect(await mail.getJob(id)).toBeUndefined();
  });

  it("groups: lists a queue's groups with their counts; pause --group holds one group", async () => {
    const tenants = new Queue("tenants", { redis, prefix });
    await tenants.addBulk(["t1", "t1", "t2"].map((id) => ({ name: "n", data: {}, opts: { group: { id } } })));
    expect(await json(["pause", "tenants", "--group", "t2"])).toEqual({
      queue: "tenants",
      group: "t2",
      paused: true,
      changed: true,
    });
    expect(await json(["groups", "tenants"])).toEqual({
      queue: "tenants",
      start: 0,
      groups: [
        { id: "t1", status: "waiting", waiting: 2, active: 0 },
        { id: "t2", status: "paused", waiting: 1, active: 0 },
      ],
    });
    const text = await cli(["groups", "tenants"]);
    expect(text.stdout.split("\n")[0]).toMatch(/^GROUP\s+STATUS\s+WAITING\s+ACTIVE$/);
    expect((await cli(["resume", "tenants", "--group", "t2"])).stdout).toMatch(
      /^resumed group "t2" of queue "tenants"/,
    );
    expect((await cli(["groups", "tenants", "--start", "x"])).code).toBe(1);
  });

  it("cancel: a delayed job fails with the reason; a finished one exits 1 saying so", async () => {
    const later = await mail.add("later", {}, { delay: 60_000 });
    expect(await json(["cancel", "mail", later.id as string, "--reason", "not needed"])).toEqual({
      id: later.id,
      outcome: "cancelled",
      state: "delayed",
    });
    expect((await mail.getJob(later.id as string))?.failedReason).toBe("not needed");
    const again = await cli(["cancel", "mail", later.id as string]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is failed: there is nothing to cancel/);
    expect((await cli(["cancel", "mail", "no-such-job"])).code).toBe(1);
  });

  it("shows progress on stderr while a long clean runs in steps", async () => {
    const bulk = new Queue("bulk", { redis, prefix });
    await bulk.addBulk(Array.from({ length: 1001 }, (_, i) => ({ name: "n", data: { i } })));
    const run = await cli(["clean", "bulk", "wait", "--limit", "1001"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('deleted 1001 wait jobs of queue "bulk"\n');
    expect(run.stderr).toBe('clean "bulk": 1000 of at most 1001 wait jobs deleted…\n');
    expect(await bulk.count("waiting")).toBe(0);
  });

  it("exits 2 on usage errors and 1 when the operation fails", async () => {
    let validation = "";
    try {
      new Queue("bad:name", { redis, prefix });
    } catch (error) {
      if (error instanceof ValidationError) validation = error.message;
    }
    expect(validation).not.toBe("");
    const [badName, noToken, unknown, badFlag, noJob, help, unknownFlag, noValue] = await Promise.all([
      cli(["jobs", "bad:name"]),
      cli(["queues"], { UPSTASH_REDIS_REST_TOKEN: undefined }),
      cli(["frobnicate"]),
      cli(["clean", "mail", "failed", "--grace", "soon"]),
      cli(["job", "mail", "no-such-job"]),
      cli(["retry", "--help"], { UPSTASH_REDIS_REST_URL: undefined }),
      cli(["clean", "mail", "failed", "--gracee", "10"]),
      cli(["metrics", "mail", "completed", "--start"]),
    ]);
    // The argument parser's own wording (positional '-- "--x"' hints, "<value>") never reaches the user.
    expect(unknownFlag).toMatchObject({ code: 2 });
    expect(unknownFlag.stderr).toBe(
      'nimbusq: unknown option --gracee for "clean" (run "nimbusq clean --help")\n',
    );
    expect(noValue.stderr).toBe(
      'nimbusq: option --start needs a value, e.g. --start 10 (run "nimbusq metrics --help")\n',
    );
    expect(badName).toEqual({ code: 2, stdout: "", stderr: `nimbusq: ${validation}\n` });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/^nimbusq: UPSTASH_REDIS_REST_TOKEN is not set/);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--grace must be an integer/);
    expect(noJob).toEqual({
      code: 1,
      stdout: "",
      stderr: 'nimbusq: job "no-such-job" not found in queue "mail"\n',
    });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: nimbusq retry <queue> \[--state failed\|completed\] \[--count N\]/);
  });
});
