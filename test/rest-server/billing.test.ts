/**
 * The billing counter: one per top-level command on every endpoint, plus each redis.call a script or
 * function runs, as Upstash bills. The counts must be exact even with concurrent requests, since cost
 * tests of the queue assert on them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { type RestStack, startRestStack } from "../support/rest-server.ts";

let stack: RestStack;

beforeAll(async () => {
  stack = await startRestStack();
});

afterAll(async () => {
  await stack.stop();
});

beforeEach(() => {
  stack.rest.resetStats();
});

const THREE_CALLS =
  "redis.call('SET', KEYS[1], ARGV[1]); redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])";

describe("billing", () => {
  it("bills an EVAL that makes 3 redis.calls as 4", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    expect(await redis.eval(THREE_CALLS, ["bill:eval"], ["1"])).toBe(2);
    expect(stack.rest.stats()).toEqual({
      requests: 1,
      commands: 1,
      scriptCalls: 3,
      billed: 4,
      keyLockingCalls: 0,
      globalLockCalls: 1,
      keyViolations: 0,
      upstashRefusals: 0,
      byCommand: { eval: 1 },
    });
  });

  it("bills a 3-command pipeline as 3 and a 2-command transaction as 2", async () => {
    const redis = stack.client();
    const pipeline = redis.pipeline();
    pipeline.set("bill:p", "1");
    pipeline.incr("bill:p");
    pipeline.get("bill:p");
    await pipeline.exec();
    expect(stack.rest.stats()).toMatchObject({ requests: 1, commands: 3, scriptCalls: 0, billed: 3 });
    const transaction = redis.multi();
    transaction.incr("bill:p");
    transaction.incr("bill:p");
    await transaction.exec();
    expect(stack.rest.stats()).toMatchObject({ requests: 2, commands: 5, billed: 5 });
    expect(stack.rest.stats().byCommand).toEqual({ set: 1, incr: 3, get: 1 });
  });

  it("separates inner calls from top-level commands of the same name in one pipeline", async () => {
    const body = JSON.stringify([
      ["incr", "bill:mixed"],
      ["eval", "redis.call('INCR', KEYS[1]); return redis.call('INCR', KEYS[1])", 1, "bill:mixed"],
      ["incr", "bill:mixed"],
      ["info", "server"],
    ]);
    const response = await stack.post("/pipeline", body);
    expect(response.status).toBe(200);
    expect(stack.rest.stats()).toMatchObject({ commands: 4, scriptCalls: 2, billed: 6 });
  });

  it("bills scripts inside a transaction, and the failed EVALSHA of a NOSCRIPT fallback", async () => {
    const transaction = JSON.stringify([
      ["eval", THREE_CALLS, 1, "bill:tx", "5"],
      ["get", "bill:tx"],
    ]);
    expect((await stack.post("/multi-exec", transaction)).status).toBe(200);
    expect(stack.rest.stats()).toMatchObject({ commands: 2, scriptCalls: 3, billed: 5 });
    stack.rest.resetStats();
    const redis = stack.client({ enableAutoPipelining: false });
    await redis.createScript(`${THREE_CALLS} -- unique`).exec(["bill:sha"], ["1"]);
    expect(stack.rest.stats()).toMatchObject({ commands: 2, scriptCalls: 3, billed: 5 });
    expect(stack.rest.stats().byCommand).toEqual({ evalsha: 1, eval: 1 });
  });

  it("counts calls made through redis.pcall, even failing ones, and by functions", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    await redis.set("bill:str", "x");
    stack.rest.resetStats();
    await redis.eval(
      "redis.pcall('INCR', KEYS[1]); redis.pcall('LPUSH', KEYS[1], 'y'); return 1",
      ["bill:str"],
      [],
    );
    expect(stack.rest.stats()).toMatchObject({ commands: 1, scriptCalls: 2 });
    const library = [
      "#!lua name=billing",
      "redis.register_function('touch', function(keys) redis.call('SET', keys[1], 'x'); return redis.call('GET', keys[1]) end)",
    ].join("\n");
    // Functions are Redis 7.0: only with Upstash mode off.
    const modeOff = await startRestServer({
      redis: { host: stack.redis.host, port: stack.redis.port },
      token: "bill-functions",
      upstashMode: false,
    });
    try {
      const functions = stack.client({ url: modeOff.url, token: modeOff.token, enableAutoPipelining: false });
      await functions.exec(["FUNCTION", "LOAD", "REPLACE", library]);
      modeOff.resetStats();
      expect(await functions.exec(["FCALL", "touch", "1", "bill:fn"])).toBe("x");
      expect(modeOff.stats()).toMatchObject({ commands: 1, scriptCalls: 2, billed: 3 });
    } finally {
      await modeOff.close();
    }
  });

  it("stays exact with many concurrent script and plain requests", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    const work: Promise<unknown>[] = [];
    for (let index = 0; index < 40; index++) {
      work.push(redis.eval(THREE_CALLS, [`bill:c${index}`], ["1"]));
      work.push(redis.incr("bill:plain"));
      work.push(redis.set(`bill:s${index}`, "v"));
    }
    await Promise.all(work);
    expect(stack.rest.stats()).toMatchObject({ requests: 120, commands: 120, scriptCalls: 120, billed: 240 });
  });

  it("does not count refused commands or admin routes", async () => {
    await stack.post("/pipeline", '[["blpop","bill:l",1],["ping"]]');
    const stats = await fetch(`${stack.rest.url}/__nimbusq/stats`, {
      headers: { authorization: `Bearer ${stack.rest.token}` },
    });
    expect(await stats.json()).toEqual({
      requests: 1,
      commands: 1,
      scriptCalls: 0,
      billed: 1,
      keyLockingCalls: 0,
      globalLockCalls: 0,
      keyViolations: 0,
      upstashRefusals: 0,
      byCommand: { ping: 1 },
    });
  });

  it("resets through resetStats and the admin route", async () => {
    await stack.post("/", '["ping"]');
    stack.rest.resetStats();
    expect(stack.rest.stats()).toEqual({
      requests: 0,
      commands: 0,
      scriptCalls: 0,
      billed: 0,
      keyLockingCalls: 0,
      globalLockCalls: 0,
      keyViolations: 0,
      upstashRefusals: 0,
      byCommand: {},
    });
    await stack.post("/", '["ping"]');
    const reset = await stack.post("/__nimbusq/stats/reset", "");
    expect(await reset.json()).toEqual({ result: "OK" });
    expect(stack.rest.stats().billed).toBe(0);
  });

  it("skips measuring script calls when countScriptCalls is false", async () => {
    const uncounted = await startRestServer({
      redis: { host: stack.redis.host, port: stack.redis.port },
      token: "t",
      countScriptCalls: false,
    });
    try {
      const redis = stack.client({ url: uncounted.url, token: "t", enableAutoPipelining: false });
      expect(await redis.eval(THREE_CALLS, ["bill:off"], ["1"])).toBe(2);
      expect(uncounted.stats()).toMatchObject({ commands: 1, scriptCalls: 0, billed: 1 });
    } finally {
      await uncounted.close();
    }
  });
});
