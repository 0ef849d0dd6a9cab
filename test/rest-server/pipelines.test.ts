/**
 * `/pipeline` and `/multi-exec` through the real client: explicit pipelines with a failing command,
 * transactions with runtime and queue-time errors, auto-pipelined concurrent calls and big batches.
 */
import { errors } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_MODES, modeName, type RestStack, startRestStack } from "../support/rest-server.ts";

let stack: RestStack;

beforeAll(async () => {
  stack = await startRestStack();
});

afterAll(async () => {
  await stack.stop();
});

describe.each(CLIENT_MODES)("client %#", (mode) => {
  const name = modeName(mode);
  const prefix = `pipes:${name}:`;

  it(`runs an explicit pipeline in order (${name})`, async () => {
    const redis = stack.client(mode);
    const pipeline = redis.pipeline();
    pipeline.set(`${prefix}a`, "OK");
    pipeline.get(`${prefix}a`);
    pipeline.incr(`${prefix}n`);
    pipeline.hset(`${prefix}h`, { f: "abcd" });
    pipeline.hget(`${prefix}h`, "f");
    expect(await pipeline.exec()).toEqual(["OK", "OK", 1, 1, "abcd"]);
  });

  it(`names the failing command of a pipeline, or keeps the errors (${name})`, async () => {
    const redis = stack.client(mode);
    const build = () => {
      const pipeline = redis.pipeline();
      pipeline.set(`${prefix}p1`, "v");
      pipeline.incr(`${prefix}p1`);
      pipeline.get(`${prefix}p1`);
      return pipeline;
    };
    await expect(build().exec()).rejects.toThrow(
      "Command 2 [ incr ] failed: ERR value is not an integer or out of range",
    );
    const kept = await build().exec({ keepErrors: true });
    expect(kept).toEqual([
      { result: "OK", error: undefined },
      { result: undefined, error: "ERR value is not an integer or out of range" },
      { result: "v", error: undefined },
    ]);
  });

  it(`runs a transaction and reports a runtime error per command (${name})`, async () => {
    const redis = stack.client(mode);
    const ok = redis.multi();
    ok.set(`${prefix}m1`, "1");
    ok.incr(`${prefix}m1`);
    ok.get(`${prefix}m1`);
    expect(await ok.exec()).toEqual(["OK", 2, mode.automaticDeserialization ? 2 : "2"]);

    const mixed = redis.multi();
    mixed.set(`${prefix}m2`, "x");
    mixed.lpush(`${prefix}m2`, "y");
    mixed.get(`${prefix}m2`);
    expect(await mixed.exec({ keepErrors: true })).toEqual([
      { result: "OK", error: undefined },
      { result: undefined, error: "WRONGTYPE Operation against a key holding the wrong kind of value" },
      { result: "x", error: undefined },
    ]);
  });

  it(`throws EXECABORT for a transaction discarded at queue time (${name})`, async () => {
    const redis = stack.client(mode);
    const transaction = redis.multi();
    transaction.set(`${prefix}m3`, "x");
    // DEL without keys is an arity error, which Redis reports at queue time and which discards it all.
    transaction.del();
    const failure = transaction.exec();
    await expect(failure).rejects.toBeInstanceOf(errors.UpstashError);
    await expect(failure).rejects.toThrow(/^EXECABORT Transaction discarded because of previous errors\./);
    expect(await stack.direct.exists(`${prefix}m3`)).toBe(0);
  });

  it(`keeps concurrent calls apart, failing only the one that errs (${name})`, async () => {
    const redis = stack.client(mode);
    await redis.set(`${prefix}text`, "not a number");
    const results = await Promise.all([
      redis.set(`${prefix}c1`, "1"),
      redis.incr(`${prefix}c2`),
      redis.get(`${prefix}c3`),
      redis.hgetall(`${prefix}c4`),
      redis.incr(`${prefix}text`).catch((error: Error) => error.message),
    ]);
    expect(results.slice(0, 4)).toEqual(["OK", 1, null, mode.automaticDeserialization ? null : []]);
    const message = "ERR value is not an integer or out of range";
    expect(results[4]).toBe(
      mode.enableAutoPipelining
        ? `Command failed: ${message}`
        : `${message}, command was: ${JSON.stringify(["incr", `${prefix}text`])}`,
    );
  });
});

describe("big batches", () => {
  it("sends 1500 concurrent auto-pipelined increments in batches of at most 1000", async () => {
    const redis = stack.client({ enableAutoPipelining: true });
    stack.rest.resetStats();
    const results = await Promise.all(Array.from({ length: 1500 }, () => redis.incr("big:counter")));
    expect(new Set(results).size).toBe(1500);
    expect(Math.max(...results)).toBe(1500);
    expect(stack.rest.stats().commands).toBe(1500);
    expect(stack.rest.stats().requests).toBeGreaterThanOrEqual(2);
    expect(stack.rest.stats().requests).toBeLessThan(10);
  });

  it("runs an explicit pipeline of 2500 commands with large values", async () => {
    const redis = stack.client({ enableAutoPipelining: false, automaticDeserialization: false });
    const pipeline = redis.pipeline();
    const value = "x".repeat(2_000);
    for (let index = 0; index < 1250; index++) {
      pipeline.set(`big:k${index}`, `${index}:${value}`);
      pipeline.get(`big:k${index}`);
    }
    const results = await pipeline.exec<string[]>();
    expect(results).toHaveLength(2500);
    expect(results[1]).toBe(`0:${value}`);
    expect(results[2499]).toBe(`1249:${value}`);
  });

  it("runs a 1000-command transaction", async () => {
    const redis = stack.client({ automaticDeserialization: false });
    const transaction = redis.multi();
    for (let index = 0; index < 1000; index++) transaction.rpush("big:list", String(index));
    const results = await transaction.exec<number[]>();
    expect(results.at(-1)).toBe(1000);
    expect(await stack.direct.llen("big:list")).toBe(1000);
  });
});

describe("the transaction endpoint on the wire", () => {
  it("answers a discarded transaction with one 400 error object", async () => {
    const response = await stack.post("/multi-exec", '[["set","wire:m","x"],["incrby","wire:m"]]');
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({
      error: "EXECABORT Transaction discarded because of previous errors.",
    });
    expect(await stack.direct.exists("wire:m")).toBe(0);
  });

  it("answers a committed transaction with one entry per command, errors without a result key", async () => {
    const response = await stack.post(
      "/multi-exec",
      '[["set","wire:t","x"],["lpush","wire:t","y"],["get","wire:t"]]',
      {
        "upstash-encoding": "base64",
      },
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      '[{"result":"OK"},{"error":"WRONGTYPE Operation against a key holding the wrong kind of value"},{"result":"eA=="}]',
    );
  });

  it("leaves the connection clean after a discarded transaction", async () => {
    for (let round = 0; round < 20; round++) {
      await stack.post("/multi-exec", '[["set","wire:c","x"],["incrby","wire:c"]]');
    }
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => stack.post("/", `["set","wire:c${index}","v"]`)),
    );
    for (const response of responses) expect(await response.json()).toEqual({ result: "OK" });
  });
});
