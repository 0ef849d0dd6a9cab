/**
 * The one rule for transient versus final Redis failures (core/redis/call-errors.ts), a test per class:
 * real errors from the real `@upstash/redis` client through the REST server where the stack can make
 * them (lost connections, a proxy's 503 page, a 500, a wrong token, a script error, a wrong type, a
 * request over the size limit), and the texts Redis and Upstash document for the rest. Then what
 * leaves core: messages under 1 KB without the request, the original kept out of sight.
 */
import { inspect } from "node:util";
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyFailure, createRedis, Queue, RedisCallError } from "../../core/index.ts";
import { checkClockOnce, leastSkewMs } from "../../core/redis/clock-check.ts";
import { retryWait } from "../../core/redis/retry.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

/** The error the real client throws for `evalsha` under the given fault (no client retries). */
async function clientError(fault: Parameters<PrivateStack["rest"]["setFault"]>[0]): Promise<unknown> {
  const client = new Redis({
    url: stack.rest.url,
    token: stack.rest.token,
    automaticDeserialization: false,
    retry: { retries: 0 },
  });
  stack.rest.setFault(fault);
  try {
    await client.evalsha("0".repeat(40), [], []);
  } catch (error) {
    return error;
  } finally {
    stack.rest.setFault(null);
  }
  throw new Error("the call succeeded");
}

const text = (message: string, name = "UpstashError") => Object.assign(new Error(message), { name });

describe("transient failures (asked again with the same request)", () => {
  it("a connection dropped before or after the command (fetch failed)", async () => {
    expect(classifyFailure(await clientError({ kind: "fail-before" }))).toEqual({
      kind: "network",
      transient: true,
    });
    expect(classifyFailure(await clientError({ kind: "drop-after" })).transient).toBe(true);
  });

  it("a proxy's 503 HTML page (the client cannot parse it)", async () => {
    expect(classifyFailure(await clientError({ kind: "status-503" }))).toEqual({
      kind: "unavailable",
      transient: true,
    });
  });

  it("a 500 with a JSON error, and Upstash's 'redis request failed' while Redis restarts", async () => {
    expect(classifyFailure(await clientError({ kind: "status-500" })).transient).toBe(true);
    expect(classifyFailure(text("ERR redis request failed: connect ECONNREFUSED")).transient).toBe(true);
  });

  it("a request timeout (the client's per-request AbortSignal)", () => {
    const timeout = new DOMException("The operation was aborted due to timeout", "TimeoutError");
    expect(classifyFailure(timeout)).toEqual({ kind: "timeout", transient: true });
  });

  it("Redis loading, busy with a script, read-only after a failover, cluster moves", () => {
    expect(classifyFailure(text("LOADING Redis is loading the dataset in memory"))).toEqual({
      kind: "loading",
      transient: true,
    });
    expect(classifyFailure(text("BUSY Redis is busy running a script."))).toEqual({
      kind: "busy",
      transient: true,
    });
    for (const message of [
      "READONLY You can't write against a read only replica.",
      "TRYAGAIN Multiple keys request during rehashing of slot",
      "CLUSTERDOWN The cluster is down",
      "MASTERDOWN Link with MASTER is down",
    ])
      expect(classifyFailure(text(message)).transient).toBe(true);
  });

  it("Upstash's connection limit and a reset connection", () => {
    expect(classifyFailure(text("ERR max concurrent connections exceeded"))).toEqual({
      kind: "connections",
      transient: true,
    });
    expect(classifyFailure(text("read ECONNRESET", "Error")).transient).toBe(true);
  });

  it("ioredis over TCP: a closed connection, a cluster refreshing its slots after a failover, a timeout", () => {
    for (const message of [
      "Connection is closed.",
      "Too many Cluster redirections. Last error: Error: Connection is closed.",
      'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
      "Command timed out",
      "Stream isn't writeable and enableOfflineQueue options is false",
    ]) {
      expect(classifyFailure(text(message, "Error")), message).toEqual({
        kind: "unavailable",
        transient: true,
      });
    }
  });
});

describe("final failures (the call itself is wrong, or a quota no retry lifts)", () => {
  it("a script's own error and a wrong type", async () => {
    const client = createRedis({ url: stack.rest.url, token: stack.rest.token });
    const scriptError = await client.eval("return redis.call('INCR', 'x', 'y')", [], []).catch((e) => e);
    expect(classifyFailure(scriptError)).toEqual({ kind: "script", transient: false });
    const prefix = uniquePrefix();
    await stack.direct.set(`${prefix}:k`, "v");
    const wrongType = await client.hgetall(`${prefix}:k`).catch((e) => e);
    expect(classifyFailure(wrongType)).toEqual({ kind: "wrong-type", transient: false });
  });

  it("a wrong token", async () => {
    const client = createRedis({ url: stack.rest.url, token: "wrong" });
    expect(classifyFailure(await client.hgetall("k").catch((e) => e))).toEqual({
      kind: "auth",
      transient: false,
    });
    for (const message of ["NOAUTH Authentication required.", "WRONGPASS invalid or missing auth token"])
      expect(classifyFailure(text(message))).toEqual({ kind: "auth", transient: false });
  });

  it("Upstash's size limits and quotas, named as such", () => {
    for (const message of [
      "ERR max request size exceeded",
      "ERR max single record size exceeded",
      "ERR max key size exceeded. Limit: 32768 bytes, Actual: 40000 bytes",
    ])
      expect(classifyFailure(text(message))).toEqual({ kind: "too-large", transient: false });
    for (const message of [
      "ERR max requests limit exceeded",
      "ERR max daily request limit exceeded",
      "ERR DB capacity quota exceeded",
    ])
      expect(classifyFailure(text(message))).toEqual({ kind: "quota", transient: false });
  });

  it("NOSCRIPT (runScript falls back to EVAL), out of memory, and anything unknown", () => {
    expect(classifyFailure(text("NOSCRIPT No matching script."))).toEqual({
      kind: "no-script",
      transient: false,
    });
    expect(classifyFailure(text("OOM command not allowed when used memory > 'maxmemory'.")).kind).toBe(
      "out-of-memory",
    );
    expect(classifyFailure(text("ERR unknown command 'FOO'")).transient).toBe(false);
    expect(classifyFailure("a string")).toEqual({ kind: "refused", transient: false });
  });
});

describe("the backoff", () => {
  it("doubles from 100 ms to a 4 s cap, less up to a quarter at random", () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((attempt) => retryWait(attempt, 0))).toEqual([
      100, 200, 400, 800, 1600, 3200, 4000,
    ]);
    expect(retryWait(2, 0.999)).toBe(300);
  });
});

describe("what an error carries", () => {
  it("a refused 9.9 MB add: a message under 1 KB, naming script and host, without the job's data", async () => {
    const secret = "do-not-log-me";
    // 9.9 MB of data, escaped in JSON to more than the 10,000,000-byte request limit.
    const data = { secret, blob: '"'.repeat(4_950_000) };
    const queue = new Queue("q", {
      redis: stack.redis,
      prefix: uniquePrefix(),
      maxDataBytes: 20_000_000,
      retry: { windowMs: 0 },
    });
    const error = await queue.add("big", data).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisCallError);
    const { message, stack: trace } = error as RedisCallError;
    expect(message.length).toBeLessThan(1024);
    expect(message).toMatch(
      /^Redis script addJobs \(EVALSHA\) on 127\.0\.0\.1:\d+ failed \(final, too-large\): ERR max request size exceeded$/,
    );
    for (const printed of [message, String(trace), inspect(error), JSON.stringify(error)])
      expect(printed).not.toContain(secret);
    // The client's own error, with the whole request, stays reachable for debugging only.
    expect(String((error as { original: Error }).original.message)).toContain(secret);
    expect(Object.keys(error as object)).not.toContain("original");
  });

  it("a wrong token: a short message without the command", async () => {
    const queue = new Queue("q", {
      redis: createRedis({ url: stack.rest.url, token: "wrong" }),
      prefix: uniquePrefix(),
    });
    const error = (await queue.add("n", { secret: "do-not-log-me" }).catch((e: unknown) => e)) as Error;
    expect(error.message.length).toBeLessThan(1024);
    expect(error.message).toMatch(/failed \(final, auth\)/);
    expect(inspect(error)).not.toMatch(/do-not-log-me|command was/);
  });
});

describe("the clock check", () => {
  it("warns once when the REST server's Date is 5 s off, not when it agrees", async () => {
    const skewed = await startRestServer({
      redis: { host: stack.redisServer.host, port: stack.redisServer.port },
      token: "skewed",
      dateOffsetMs: 5000,
    });
    try {
      const warnings: string[] = [];
      const warn = (message: string) => warnings.push(message);
      await checkClockOnce(skewed.url, { warn });
      await checkClockOnce(skewed.url, { warn });
      await checkClockOnce(stack.rest.url, { warn });
      expect(warnings).toEqual([
        expect.stringMatching(/clock is at least [45]\.\d s behind 127\.0\.0\.1:\d+'s/),
      ]);
    } finally {
      await skewed.close();
    }
  });

  it("counts the Date header's whole seconds and the round trip as uncertainty", () => {
    expect(leastSkewMs(10_000, 10_400, 10_600)).toBe(0);
    expect(leastSkewMs(10_000, 13_000, 13_000)).toBe(2000);
    expect(leastSkewMs(10_000, 7000, 7200)).toBe(2800);
  });
});

describe("close() during an outage", () => {
  it("stops retrying at once: the pending call fails and close resolves promptly", async () => {
    const queue = new Queue("q", { redis: stack.redis, prefix: uniquePrefix() });
    await queue.add("warm", {});
    stack.rest.setFault({ kind: "status-500", command: "evalsha" });
    try {
      const started = Date.now();
      const adding = queue.add("during", {}).catch((error: Error) => error);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await queue.close();
      const error = await adding;
      expect(error).toBeInstanceOf(RedisCallError);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      stack.rest.setFault(null);
    }
  });
});
