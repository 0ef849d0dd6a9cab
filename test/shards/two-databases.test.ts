/**
 * A deployment over two Upstash-like databases (issue 27: two REST servers, each on its own
 * redis-server) configured only by the environment as deployed (NIMBUSQ_DATABASES and the suffixed
 * connection variables, NIMBUSQ_QUEUE_DATABASES, NIMBUSQ_WORKERS): one HTTP API, one sweeper and the
 * worker functions (run in-process as Lambda would, kicked by the API and the sweeper) serve six
 * queues, every key of a queue on its own database; an idle tick reads one key per database.
 */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue, type ShardMap, ValidationError } from "../../core/index.ts";
import { httpOptionsFromEnv } from "../../functions/config/http-env.ts";
import { redisFromEnv } from "../../functions/config/redis-env.ts";
import { workerKickFromEnv, workersFromEnv } from "../../functions/config/workers-env.ts";
import { createHttpApp } from "../../functions/http/index.ts";
import { setInvocationDeadline } from "../../functions/request-deadline.ts";
import { sweeperHandler } from "../../functions/sweeper.ts";
import { type WorkerEvent, workerHandler } from "../../functions/worker.ts";
import { LocalLambda } from "../../infra/local/local-lambda.ts";
import { keysUnder, type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

const queues = ["email", "report", "image", "import", "webhook", "invoice"];
const prefix = uniquePrefix("two-dbs");
let one: PrivateStack;
let two: PrivateStack;
let env: Record<string, string>;
let lambda: LocalLambda;
let app: ReturnType<typeof createHttpApp>;
const ran: string[] = [];

beforeAll(async () => {
  [one, two] = await Promise.all([startPrivateStack(), startPrivateStack()]);
  env = {
    NIMBUSQ_DATABASES: "one,two",
    UPSTASH_REDIS_REST_URL_ONE: one.rest.url,
    UPSTASH_REDIS_REST_TOKEN_ONE: one.rest.token,
    UPSTASH_REDIS_REST_URL_TWO: two.rest.url,
    UPSTASH_REDIS_REST_TOKEN_TWO: two.rest.token,
    NIMBUSQ_QUEUE_DATABASES: "email:one,report:two",
    NIMBUSQ_WORKERS: queues.map((q) => `${q}:${q}-worker:10:2`).join(","),
    NIMBUSQ_PREFIX: prefix,
    NIMBUSQ_API_TOKENS: "admin:secret",
  };
  lambda = new LocalLambda();
  for (const queue of queues) {
    const worker = workerHandler({
      queue,
      prefix,
      redis: redisFromEnv(env),
      processor: async (job) => {
        ran.push(`${queue}/${job.id}`);
        return { queue };
      },
      jobTimeoutMs: 5000,
      invoke: lambda.invoke,
      output: () => {},
    });
    lambda.register(`${queue}-worker`, {
      timeoutMs: 30_000,
      reservedConcurrency: 2,
      handler: (event, context) => worker(event as WorkerEvent, context),
    });
  }
  const sweeper = sweeperHandler({
    queues: workersFromEnv(env),
    prefix,
    redis: redisFromEnv(env),
    mode: "once",
    releaseLock: true,
    // Metrics every Nth pass read each queue; the idle-tick figure below is the pass without them.
    metricsEveryPasses: 0,
    invoke: lambda.invoke,
    output: () => {},
  });
  lambda.register("sweeper", { timeoutMs: 5000, reservedConcurrency: 1, handler: sweeper });
  app = createHttpApp({ ...httpOptionsFromEnv(env), kick: workerKickFromEnv(env, lambda.invoke) });
});
afterAll(async () => {
  await lambda?.stop(1000);
  await Promise.all([one?.stop(), two?.stop()]);
});

async function api(method: string, path: string, body?: unknown) {
  // One process plays every function here: a worker invocation's deadline, module-wide as in a Lambda
  // container, must not bound the API's requests after it ended.
  setInvocationDeadline(undefined);
  const response = await app.request(path, {
    method,
    headers: { authorization: "Bearer secret", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Runs the CLI from its source with the deployment's environment. */
function cli(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      "node_modules/.bin/tsx",
      ["cli/main.ts", ...args],
      { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 },
      (error, stdout) => resolve({ code: error ? 1 : 0, stdout }),
    );
  });
}

/** The queue names a database holds keys of (its per-prefix keys aside). */
async function queuesIn(stack: PrivateStack): Promise<string[]> {
  const heads = (await keysUnder(stack.direct, prefix)).map(
    (key) => key.slice(prefix.length + 1).split(":")[0],
  );
  return [...new Set(heads)].filter((head) => head !== "nq" && head !== "nq-req").sort() as string[];
}

describe("two databases, one deployment", () => {
  it("serves six queues through one HTTP API, the workers and one sweeper, each queue on its database", async () => {
    const shards = redisFromEnv(env) as ShardMap;
    const placed = Object.fromEntries(queues.map((q) => [q, shards.databaseOf(q)]));
    expect(placed.email).toBe("one");
    expect(placed.report).toBe("two");
    const ids: [string, string][] = [];
    for (const queue of queues) {
      const now = await api("POST", `/queues/${queue}/jobs`, { name: "now", data: { queue } });
      const later = await api("POST", `/queues/${queue}/jobs`, {
        name: "later",
        data: {},
        opts: { delay: 300 },
      });
      expect([now.status, later.status]).toEqual([202, 202]);
      ids.push([queue, String(now.json.id)], [queue, String(later.json.id)]);
    }
    // The delayed jobs come due between ticks: the sweeper's passes over each database promote them.
    for (let tick = 0; tick < 40 && ran.length < ids.length; tick++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await lambda.invokeAndWait("sweeper", { source: "aws.events" });
    }
    for (const [queue, id] of ids) {
      const read = await api("GET", `/queues/${queue}/jobs/${id}?wait=5000`);
      expect({ queue, state: read.json.state }).toEqual({ queue, state: "completed" });
    }
    expect(ran.sort()).toEqual(ids.map(([queue, id]) => `${queue}/${id}`).sort());
    const onOne = queues.filter((q) => placed[q] === "one").sort();
    const onTwo = queues.filter((q) => placed[q] === "two").sort();
    expect(onOne.length).toBeGreaterThan(0);
    expect(onTwo.length).toBeGreaterThan(0);
    expect(await queuesIn(one)).toEqual(onOne);
    expect(await queuesIn(two)).toEqual(onTwo);
  });

  it("an idle tick reads one key per database", async () => {
    await lambda.invokeAndWait("sweeper", { source: "aws.events" });
    one.rest.resetStats();
    two.rest.resetStats();
    await lambda.invokeAndWait("sweeper", { source: "aws.events" });
    expect([one.rest.stats().billed, two.rest.stats().billed]).toEqual([1, 1]);
  });

  it("the CLI lists the queues of both databases, each read on its own", async () => {
    const run = await cli(["queues", "--json"]);
    expect(run.code).toBe(0);
    const listed = JSON.parse(run.stdout) as {
      queues: { name: string; database: string; placedOn?: string; counts: { completed: number } }[];
    };
    const shards = redisFromEnv(env) as ShardMap;
    expect(listed.queues.map((q) => [q.name, q.database, q.placedOn, q.counts.completed])).toEqual(
      [...queues].sort().map((q) => [q, shards.databaseOf(q), undefined, 2]),
    );
  });

  it("the CLI reads a queue where its keys are, and flags one the map places elsewhere", async () => {
    // A queue written to database two before the map was set (the map hashes it to one): not pinned.
    const shards = redisFromEnv(env) as ShardMap;
    const stray = Array.from({ length: 50 }, (_, i) => `stray${i}`).find(
      (q) => shards.databaseOf(q) === "one",
    );
    await new Queue(stray as string, { redis: two.redis, prefix }).add("x", {});
    const run = await cli(["queues"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`${stray} has its keys on database two but the shard map places it on one`),
    );
    expect(run.stdout).toMatch(/QUEUE +DATABASE +PAUSED/);
  });

  it("refuses what would write across databases, naming the option", async () => {
    const shards = redisFromEnv(env) as ShardMap;
    const other = queues.find((q) => shards.databaseOf(q) !== shards.databaseOf("email")) as string;
    const refused = await api("POST", "/queues/email/jobs", {
      name: "x",
      data: {},
      opts: { deadLetter: { queue: other } },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.json)).toMatch(
      /opts\.deadLetter\.queue must be a queue on the same database/,
    );
    const badEnv = { ...env, NIMBUSQ_QUEUE_DATABASES: "email:three" };
    expect(() => redisFromEnv(badEnv)).toThrow(
      /NIMBUSQ_QUEUE_DATABASES\[0\]\.database must be one of NIMBUSQ_DATABASES \(one, two\)/,
    );
    expect(() => redisFromEnv({ ...env, NIMBUSQ_DATABASES: "one,one_param" })).toThrow(
      /not ending in _param/,
    );
    const badUrl = { ...env, NIMBUSQ_REDIS_URL_TWO: "http://127.0.0.1:1" };
    expect(() => redisFromEnv(badUrl)).toThrow(
      /NIMBUSQ_REDIS_URL_TWO must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    const noUrl = { ...env, UPSTASH_REDIS_REST_URL_TWO: "" };
    expect(() => redisFromEnv(noUrl)).toThrow(ValidationError);
    expect(() => redisFromEnv(noUrl)).toThrow(/UPSTASH_REDIS_REST_URL_TWO and UPSTASH_REDIS_REST_TOKEN_TWO/);
  });
});
