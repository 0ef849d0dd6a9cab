/**
 * One job's outcome never decides another's. Results that fit complete even when together they are
 * far past the request limit (the acks are split); only a single result larger than the limit fails,
 * that job alone, with a reason naming its size and the limit; anything a processor throws — strings,
 * `undefined`, objects whose getters throw, an Error whose `stack` getter throws — fails that job
 * alone. `drain()` resolves, and nothing is left active or locked.
 *
 * The REST server runs with Upstash's request limit, 10,000,000 bytes (its `maxBodyBytes`).
 */
import { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, createRedis, Queue, Worker } from "../../core/index.ts";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { keysUnder, uniquePrefix } from "../support/stack.ts";
import { misplacedJobs } from "../support/state-walk.ts";

const requestLimit = 10_000_000;
const bigChars = 3_000_000;
const oversizedChars = 11_000_000;

let redisServer: RedisServer;
let rest: RestServer;
let direct: IORedis;
beforeAll(async () => {
  redisServer = await startRedisServer();
  rest = await startRestServer({
    redis: { host: redisServer.host, port: redisServer.port },
    token: "isolation",
    maxBodyBytes: requestLimit,
  });
  direct = new IORedis({ host: redisServer.host, port: redisServer.port, maxRetriesPerRequest: null });
});
afterAll(async () => {
  direct?.disconnect();
  await rest?.close();
  await redisServer?.stop();
});

/** What a job of the batch does; its name says which. */
type Kind =
  | "small"
  | "big"
  | "oversized"
  | "stack-getter-throws"
  | "throws-string"
  | "throws-undefined"
  | "getters-throw";

const failing: readonly Kind[] = [
  "oversized",
  "stack-getter-throws",
  "throws-string",
  "throws-undefined",
  "getters-throw",
];

/** A 3 MB result that tells the jobs apart (a letter per job). */
const bigResult = (n: number) => String.fromCharCode(97 + (n % 26)).repeat(bigChars);

function hostile(): unknown {
  const boom = (what: string) => () => {
    throw new Error(`${what} getter throws`);
  };
  const value = {};
  for (const key of ["message", "name", "stack", "cause", "toJSON", "toString", "valueOf"]) {
    Object.defineProperty(value, key, { get: boom(key), enumerable: true });
  }
  Object.defineProperty(value, Symbol.toPrimitive, { get: boom("toPrimitive") });
  return value;
}

async function run(kind: Kind, n: number): Promise<unknown> {
  switch (kind) {
    case "small":
      return { small: n };
    case "big":
      return bigResult(n);
    case "oversized":
      return "z".repeat(oversizedChars);
    case "stack-getter-throws": {
      const error = new Error("the stack getter of this error throws");
      Object.defineProperty(error, "stack", {
        get() {
          throw new Error("no stack for you");
        },
      });
      throw error;
    }
    case "throws-string":
      throw "a plain string was thrown";
    case "throws-undefined":
      throw undefined;
    case "getters-throw":
      throw hostile();
  }
}

/**
 * The byte counts a reason names: plain or grouped digits ("11000002", "11,000,002"), optionally with
 * a unit (bytes, B, kB, KB, MB, MiB).
 */
function byteFigures(reason: string): number[] {
  const figures: number[] = [];
  const pattern = /(\d{1,3}(?:[,_ ]\d{3})+|\d+)(\.\d+)?\s*(MiB|MB|KiB|kB|KB|bytes|B)?\b/g;
  for (const match of reason.matchAll(pattern)) {
    const value = Number(`${(match[1] ?? "").replace(/[,_ ]/g, "")}${match[2] ?? ""}`);
    const unit = match[3] ?? "";
    const scale =
      unit === "MiB"
        ? 1024 * 1024
        : unit === "MB"
          ? 1e6
          : unit === "KiB"
            ? 1024
            : unit === "kB" || unit === "KB"
              ? 1e3
              : 1;
    figures.push(value * scale);
  }
  return figures;
}

interface Outcome {
  drain: string;
  runs: Record<string, number>;
  states: Record<string, string>;
  active: string[];
  locks: string[];
  misplaced: string[];
  failedEvents: string[];
}

/** Adds one job per kind (in this order), drains once and reads back what Redis holds. */
async function drainBatch(kinds: readonly Kind[]): Promise<{
  prefix: string;
  ids: string[];
  outcome: Outcome;
  summary: unknown;
}> {
  const prefix = uniquePrefix("iso");
  const qp = `${prefix}:q`;
  const redis = createRedis({ url: rest.url, token: rest.token, timeoutMs: 30_000 });
  const queue = new Queue("q", { redis, prefix });
  // Every other job grouped (docs/groups.md): isolation holds for both kinds.
  const added = await queue.addBulk(
    kinds.map((kind, n) => ({ name: kind, data: { n }, opts: n % 2 ? { group: { id: `g${n % 3}` } } : {} })),
  );
  const ids = added.map((job) => job.id);
  const runs = new Map<string, number>();
  const failedEvents: string[] = [];
  const worker = new Worker(
    "q",
    (job: ActiveJob) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      return run(job.name as Kind, (job.data as { n: number }).n);
    },
    { redis, prefix, batchSize: kinds.length, concurrency: kinds.length, leaseMs: 20_000 },
  );
  worker.on("failed", (job) => failedEvents.push(job?.id ?? "?"));
  worker.on("error", () => {});
  let drain = "resolved";
  let summary: unknown;
  try {
    summary = await worker.drain();
  } catch (error) {
    drain = `rejected: ${error instanceof Error ? error.message.slice(0, 300) : "a non-Error"}`;
  }
  const states: Record<string, string> = {};
  for (const id of ids) {
    const [completed, failed] = await Promise.all([
      direct.zscore(`${qp}:completed`, id),
      direct.zscore(`${qp}:failed`, id),
    ]);
    states[id] = completed !== null ? "completed" : failed !== null ? "failed" : "neither";
  }
  const outcome: Outcome = {
    drain,
    runs: Object.fromEntries(ids.map((id) => [id, runs.get(id) ?? 0])),
    states,
    active: await direct.lrange(`${qp}:active`, 0, -1),
    locks: (await keysUnder(direct, qp)).filter((key) => key.endsWith(":lock")),
    misplaced: await misplacedJobs(direct, qp, ids),
    failedEvents: failedEvents.sort(),
  };
  return { prefix, ids, outcome, summary };
}

/** What a clean drain of `kinds` must leave: every job run once, each in its own final state. */
function expected(ids: readonly string[], kinds: readonly Kind[]): Outcome {
  const failedIds = ids.filter((_, i) => failing.includes(kinds[i] as Kind));
  return {
    drain: "resolved",
    runs: Object.fromEntries(ids.map((id) => [id, 1])),
    states: Object.fromEntries(
      ids.map((id, i) => [id, failing.includes(kinds[i] as Kind) ? "failed" : "completed"]),
    ),
    active: [],
    locks: [],
    misplaced: [],
    failedEvents: [...failedIds].sort(),
  };
}

async function field(prefix: string, id: string, name: string): Promise<string | null> {
  return direct.hget(`${prefix}:q:${id}`, name);
}

/** Checks the stored return values of the jobs that must complete. */
async function expectResults(prefix: string, ids: readonly string[], kinds: readonly Kind[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    if (kinds[i] === "small") {
      expect(await field(prefix, id, "returnvalue"), `job ${id}`).toBe(JSON.stringify({ small: i }));
    }
    if (kinds[i] === "big") {
      const stored = await field(prefix, id, "returnvalue");
      expect(stored?.length, `length of job ${id}'s returnvalue`).toBe(bigChars + 2);
      expect(stored === JSON.stringify(bigResult(i)), `job ${id}'s returnvalue is its own`).toBe(true);
    }
  }
}

/** Checks that the jobs that must fail carry a reason, and the oversized one its size and the limit. */
async function expectReasons(prefix: string, ids: readonly string[], kinds: readonly Kind[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    const kind = kinds[i] as Kind;
    if (!failing.includes(kind)) continue;
    const reason = await field(prefix, id, "failedReason");
    expect(typeof reason === "string" && reason.length > 0, `job ${id} (${kind}) has a failedReason`).toBe(
      true,
    );
    expect(await field(prefix, id, "returnvalue"), `job ${id} (${kind}) has no returnvalue`).toBeNull();
    const text = reason ?? "";
    if (kind === "stack-getter-throws") expect(text).toContain("the stack getter of this error throws");
    if (kind === "throws-string") expect(text).toContain("a plain string was thrown");
    if (kind === "oversized") {
      const figures = byteFigures(text);
      const size = figures.some((f) => f >= oversizedChars && f <= oversizedChars * 1.01);
      const limit = figures.some((f) => f >= 9_000_000 && f <= 10_485_760);
      expect({ reason: text.slice(0, 300), namesSize: size, namesLimit: limit }).toEqual({
        reason: text.slice(0, 300),
        namesSize: true,
        namesLimit: true,
      });
    }
  }
}

describe("isolation: one job's outcome never decides another's", () => {
  it("four 3 MB results beside small jobs in one batch all complete (the acks are split under the limit)", async () => {
    const kinds: Kind[] = ["small", "big", "small", "big", "small", "big", "small", "big", "small", "small"];
    expect(4 * bigChars, "one ack carrying all four would be over the limit").toBeGreaterThan(requestLimit);
    const { prefix, ids, outcome, summary } = await drainBatch(kinds);
    expect(outcome).toEqual(expected(ids, kinds));
    expect(summary).toMatchObject({ completed: 10, failed: 0 });
    await expectResults(prefix, ids, kinds);
  });

  it("a result larger than the limit fails that job alone, with a reason naming its size and the limit", async () => {
    const kinds: Kind[] = ["small", "oversized", "small", "big", "small"];
    const { prefix, ids, outcome, summary } = await drainBatch(kinds);
    expect(outcome).toEqual(expected(ids, kinds));
    expect(summary).toMatchObject({ completed: 4, failed: 1 });
    await expectResults(prefix, ids, kinds);
    await expectReasons(prefix, ids, kinds);
  });

  it.each(["stack-getter-throws", "throws-string", "throws-undefined", "getters-throw"] as const)(
    "a processor that does %s fails that job alone with a reason; its siblings complete; drain() resolves",
    async (thrower) => {
      const kinds: Kind[] = ["small", "small", thrower, "small", "small"];
      const { prefix, ids, outcome, summary } = await drainBatch(kinds);
      expect(outcome).toEqual(expected(ids, kinds));
      expect(summary).toMatchObject({ completed: 4, failed: 1 });
      await expectResults(prefix, ids, kinds);
      await expectReasons(prefix, ids, kinds);
    },
  );

  it("all four kinds of throw in one batch with small siblings", async () => {
    const kinds: Kind[] = [
      "small",
      "stack-getter-throws",
      "small",
      "throws-string",
      "small",
      "throws-undefined",
      "small",
      "getters-throw",
      "small",
    ];
    const { prefix, ids, outcome, summary } = await drainBatch(kinds);
    expect(outcome).toEqual(expected(ids, kinds));
    expect(summary).toMatchObject({ completed: 5, failed: 4 });
    await expectResults(prefix, ids, kinds);
    await expectReasons(prefix, ids, kinds);
  });

  it("all of it mixed in one batch: small jobs once, 3 MB jobs completed, the rest failed with reasons", async () => {
    const kinds: Kind[] = [
      "small",
      "big",
      "stack-getter-throws",
      "small",
      "big",
      "throws-string",
      "small",
      "oversized",
      "big",
      "throws-undefined",
      "small",
      "getters-throw",
      "big",
      "small",
    ];
    const { prefix, ids, outcome, summary } = await drainBatch(kinds);
    expect(outcome).toEqual(expected(ids, kinds));
    expect(summary).toMatchObject({ completed: 9, failed: 5 });
    await expectResults(prefix, ids, kinds);
    await expectReasons(prefix, ids, kinds);
    // Nothing is left for a second drain to find.
    const again = new Worker("q", async () => "must not run", {
      redis: createRedis({ url: rest.url, token: rest.token }),
      prefix,
    });
    expect(await again.drain()).toMatchObject({ leased: 0 });
  });
});
