/**
 * Scripts flagged `#!lua flags=allow-key-locking`: Redis 7 never sees the flag, clients keep their own
 * SHAs, and in declared-keys mode a flagged script may only touch keys passed in KEYS, with Upstash's
 * error text otherwise. Billing and error line numbers must not change.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import type { Redis } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRedis } from "../../core/redis/client.ts";
import { canConnect, freePort } from "../../infra/redis-server.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { type RestStack, startRestStack } from "../support/rest-server.ts";

const FLAG = "#!lua flags=allow-key-locking";
const DYNAMIC =
  "ERR Dynamic keys are not allowed in Lua scripts when 'allow-key-locking' flag is set. Key was: ";

/** Touches KEYS[1..9] with multi-key and multi-argument commands; returns what it read back. */
const MANY_COMMANDS = `${FLAG}
redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000)
redis.call('SET', KEYS[2], 'two')
local before = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SADD', KEYS[4], 'a', 'b', 'c', 'd', 'e')
local removed = redis.call('SREM', KEYS[4], 'a', 'b', 'c', 'x')
local id = redis.call('XADD', KEYS[5], '*', 'field', ARGV[1])
redis.call('ZADD', KEYS[6], 1, 'one', 2, 'two')
redis.call('HSET', KEYS[7], 'f1', 'v1', 'f2', 'v2')
redis.call('LPUSH', KEYS[8], 'x', 'y', 'x')
local kept = redis.call('LREM', KEYS[8], 0, 'x')
redis.call('ZUNIONSTORE', KEYS[9], 1, KEYS[6], 'WEIGHTS', 2)
return {before[1], before[2], removed, kept, redis.call('ZSCORE', KEYS[9], 'two'), type(id)}`;

/** Writes to a key built from KEYS[1] and ARGV[1], which is only allowed when that name is in KEYS. */
const BUILT_KEY = `${FLAG}
local name = KEYS[1] .. ':' .. ARGV[1]
redis.call('SET', name, 'v')
return redis.call('GET', name)`;

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");
const keysFor = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}:${i + 1}`);

let stack: RestStack;
let unchecked: RestServer;
let redis: Redis;
let uncheckedRedis: Redis;

beforeAll(async () => {
  stack = await startRestStack();
  unchecked = await startRestServer({
    redis: { host: stack.redis.host, port: stack.redis.port },
    token: "unchecked",
    declaredKeys: false,
  });
  redis = createRedis({ url: stack.rest.url, token: stack.rest.token });
  uncheckedRedis = createRedis({ url: unchecked.url, token: unchecked.token });
});

afterAll(async () => {
  await unchecked.close();
  await stack.stop();
});

beforeEach(() => {
  stack.rest.resetStats();
  unchecked.resetStats();
});

describe("declared-keys mode", () => {
  it("runs a flagged script touching only KEYS, by EVAL and by EVALSHA of the original's SHA", async () => {
    const keys = keysFor("dk:many", 9);
    const expected = ["v1", "two", 3, 2, "4", "string"];
    expect(await redis.eval(MANY_COMMANDS, keys, ["v1"])).toEqual(expected);
    expect(await redis.evalsha(sha1(MANY_COMMANDS), keys, ["v1"])).toEqual(expected);
    expect(stack.rest.stats()).toMatchObject({ keyLockingCalls: 2, keyViolations: 0 });
    expect(stack.rest.stats().byCommand).toEqual({ eval: 1, evalsha: 1 });
    expect(await stack.direct.pttl(keys[0] as string)).toBeGreaterThan(0);
    expect(await stack.direct.smembers(keys[3] as string)).toEqual(expect.arrayContaining(["d", "e"]));
    expect(await stack.direct.hget(keys[6] as string, "f2")).toBe("v2");
    expect(await stack.direct.lrange(keys[7] as string, 0, -1)).toEqual(["y", "y"]);
    // Redis only ever saw the rewritten text.
    expect(await stack.direct.script("EXISTS", sha1(MANY_COMMANDS))).toEqual([0]);
  });

  it("counts the script runs Upstash would hold its global lock for: unflagged EVAL and EVALSHA that ran", async () => {
    const plain = "return redis.call('GET', KEYS[1])";
    await redis.eval(plain, ["dk:plain"], []);
    await redis.evalsha(sha1(plain), ["dk:plain"], []);
    await redis.eval(MANY_COMMANDS, keysFor("dk:lock", 9), ["v1"]);
    expect(stack.rest.stats()).toMatchObject({ globalLockCalls: 2, keyLockingCalls: 1 });
  });

  it("refuses a key built in the script that is not in KEYS, and counts it", async () => {
    const failure = redis.eval(BUILT_KEY, ["dk:built"], ["child"]);
    await expect(failure).rejects.toThrow(`${DYNAMIC}dk:built:child`);
    expect(stack.rest.stats()).toMatchObject({ keyLockingCalls: 1, keyViolations: 1 });
    expect(await stack.direct.exists("dk:built:child")).toBe(0);
    expect(await redis.eval(BUILT_KEY, ["dk:built", "dk:built:child"], ["child"])).toBe("v");
    expect(stack.rest.stats()).toMatchObject({ keyLockingCalls: 2, keyViolations: 1 });
    stack.rest.resetStats();
    expect(stack.rest.stats()).toMatchObject({ keyLockingCalls: 0, keyViolations: 0 });
  });

  it("returns the refusal from redis.pcall and counts it there too", async () => {
    const script = `${FLAG}\nreturn {redis.pcall('GET', KEYS[1] .. '!'), redis.pcall('GET', KEYS[1])}`;
    expect(await redis.eval(script, ["dk:pcall"], [])).toEqual([`${DYNAMIC}dk:pcall!`, null]);
    expect(stack.rest.stats().keyViolations).toBe(1);
  });

  it("refuses movable-key commands it cannot verify and database-wide ones", async () => {
    const sort = redis.eval(`${FLAG}\nlocal r = redis.call('SORT', KEYS[1])\nreturn r`, ["dk:sort"], []);
    await expect(sort).rejects.toThrow(/ERR cannot verify keys of SORT in Lua scripts when 'allow-key-/);
    const flush = redis.eval(`${FLAG}\nlocal r = redis.call('FLUSHDB')\nreturn r`, [], []);
    await expect(flush).rejects.toThrow(/ERR FLUSHDB is not allowed in Lua scripts/);
    const zunion = `${FLAG}\nreturn redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], ARGV[1])`;
    await expect(redis.eval(zunion, ["dk:zd", "dk:z1"], ["dk:z2"])).rejects.toThrow(`${DYNAMIC}dk:z2`);
    expect(await redis.eval(zunion, ["dk:zd", "dk:z1", "dk:z2"], ["dk:z2"])).toBe(0);
    expect(stack.rest.stats().keyViolations).toBe(3);
  });

  it("gives unflagged scripts no key check, undeclared keys included", async () => {
    const script = "redis.call('SET', KEYS[1] .. ':x', 'v')\nreturn redis.call('GET', KEYS[1] .. ':x')";
    expect(await redis.eval(script, ["dk:plain"], [])).toBe("v");
    // Upstash mode rewrites every script (upstash-mode.test.ts); the client still sees its own SHA.
    expect(await redis.scriptExists(sha1(script))).toEqual([1]);
    expect(stack.rest.stats()).toMatchObject({ keyLockingCalls: 0, keyViolations: 0 });
  });

  it("lets undeclared keys through with declaredKeys: false, still stripping the flag", async () => {
    expect(await uncheckedRedis.eval(BUILT_KEY, ["dk:off"], ["child"])).toBe("v");
    expect(await uncheckedRedis.evalsha(sha1(BUILT_KEY), ["dk:off"], ["child"])).toBe("v");
    expect(unchecked.stats()).toMatchObject({ keyLockingCalls: 2, keyViolations: 0 });
  });

  it("bills a flagged script the same with the mode on and off", async () => {
    const keys = keysFor("dk:bill", 9);
    await redis.eval(MANY_COMMANDS, keys, ["v"]);
    await uncheckedRedis.eval(MANY_COMMANDS, keys, ["v"]);
    const on = stack.rest.stats();
    const off = unchecked.stats();
    expect(on.scriptCalls).toBe(13);
    expect({ ...on, byCommand: off.byCommand }).toEqual(off);
  });

  it("keeps the line numbers of script errors", async () => {
    // The same body without the flag, with a comment keeping line 1, runs unmodified.
    const body = (flag: string) =>
      `${flag}\nlocal mode = ARGV[1]\nif mode == 'lua' then\n  local t = nil\n  return t.x\nend\n` +
      `local v = redis.call('INCR', KEYS[1])\nreturn v`;
    await stack.direct.set("dk:lines", "not a number");
    for (const mode of ["lua", "redis"]) {
      const errors = [];
      for (const flag of [FLAG, "-- no flag"]) {
        const source = body(flag);
        const reason = await redis.eval(source, ["dk:lines"], [mode]).catch((error: Error) => error.message);
        // The client appends the command, whose first line differs; Redis's text ends before it.
        errors.push(String(reason).split(", command was:")[0]?.replace(sha1(source), "<sha>"));
      }
      expect(errors[0]).toMatch(/on @user_script:[57]\./);
      expect(errors[0]).toBe(errors[1]);
    }
    const undeclared = `${FLAG}\nlocal k = KEYS[1] .. '?'\nlocal v = redis.call('GET', k)\nreturn v`;
    await expect(redis.eval(undeclared, ["dk:lines"], [])).rejects.toThrow(/on @user_script:3\./);
  });

  it("answers SCRIPT LOAD and SCRIPT EXISTS with the client's SHA", async () => {
    const sha = await redis.scriptLoad(BUILT_KEY);
    expect(sha).toBe(sha1(BUILT_KEY));
    expect(await redis.scriptExists(sha, "0".repeat(40))).toEqual([1, 0]);
    expect(await redis.evalsha(sha, ["dk:load", "dk:load:c"], ["c"])).toBe("v");
  });

  it("carries flagged EVALSHA in pipelines and transactions", async () => {
    await redis.scriptLoad(BUILT_KEY);
    const pipeline = redis.pipeline();
    pipeline.evalsha(sha1(BUILT_KEY), ["dk:p", "dk:p:1"], ["1"]);
    pipeline.evalsha(sha1(BUILT_KEY), ["dk:p"], ["2"]);
    pipeline.get("dk:p:1");
    expect(await pipeline.exec({ keepErrors: true })).toEqual([
      { result: "v", error: undefined },
      { result: undefined, error: expect.stringContaining(`${DYNAMIC}dk:p:2`) },
      { result: "v", error: undefined },
    ]);
    const transaction = redis.multi();
    transaction.evalsha(sha1(BUILT_KEY), ["dk:m", "dk:m:1"], ["1"]);
    transaction.eval(BUILT_KEY, ["dk:m", "dk:m:2"], ["2"]);
    expect(await transaction.exec()).toEqual(["v", "v"]);
    expect(stack.rest.stats()).toMatchObject({ keyLockingCalls: 4, keyViolations: 1 });
  });

  it("survives SCRIPT FLUSH: a lone EVALSHA is retried, a pipelined one falls back to EVAL", async () => {
    await redis.scriptLoad(BUILT_KEY);
    await stack.direct.script("FLUSH");
    expect(await redis.evalsha(sha1(BUILT_KEY), ["dk:f", "dk:f:1"], ["1"])).toBe("v");
    await stack.direct.script("FLUSH");
    const script = stack.client({ automaticDeserialization: false }).createScript(BUILT_KEY);
    const results = await Promise.all([
      script.exec(["dk:f", "dk:f:2"], ["2"]),
      script.exec(["dk:f", "dk:f:3"], ["3"]),
    ]);
    expect(results).toEqual(["v", "v"]);
    const billed = stack.rest.stats();
    // Both EVALSHAs shared one auto-pipelined request, so each got NOSCRIPT and the client sent EVAL.
    expect(billed.byCommand).toEqual({ script: 1, evalsha: 3, eval: 2 });
    expect(billed).toMatchObject({ scriptCalls: 6, keyLockingCalls: 3, keyViolations: 0 });
  });
});

/** A redis-server on a given port, so the REST server's backend can be restarted in place. */
async function redisOn(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--logfile", ""],
    { stdio: "ignore" },
  );
  for (let attempt = 0; attempt < 400; attempt++) {
    if (await canConnect(port)) return child;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill("SIGKILL");
  throw new Error(`redis-server did not start on port ${port}`);
}

async function stopRedis(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

describe("a restarted redis-server", () => {
  it("still runs a flagged script by EVALSHA", async () => {
    const port = await freePort();
    let backend = await redisOn(port);
    const rest = await startRestServer({ redis: { host: "127.0.0.1", port }, token: "restart" });
    try {
      const client = createRedis({ url: rest.url, token: rest.token });
      expect(await client.eval(BUILT_KEY, ["dk:r", "dk:r:1"], ["1"])).toBe("v");
      await stopRedis(backend);
      backend = await redisOn(port);
      expect(await client.evalsha(sha1(BUILT_KEY), ["dk:r", "dk:r:2"], ["2"])).toBe("v");
      const direct = new IORedis({ host: "127.0.0.1", port });
      expect(await direct.get("dk:r:2")).toBe("v");
      direct.disconnect();
    } finally {
      await rest.close();
      await stopRedis(backend);
    }
  });
});
