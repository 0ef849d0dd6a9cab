/**
 * Upstash mode (on by default): the Redis 7.0-only forms are refused like a Redis 6.2 syntax error —
 * as plain commands on every endpoint and inside every script, flagged or not, at the caller's line —
 * while the 6.2 forms beside them work, and everything passes with the mode off. Scripts are rewritten
 * for the check, yet clients keep their SHAs, line numbers and billing. Requests are limited to
 * Upstash's 10,000,000 bytes.
 */
import { createHash } from "node:crypto";
import type { Redis } from "@upstash/redis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { REDIS62_MARK } from "../../infra/rest-server/redis62.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { type RestStack, startRestStack } from "../support/rest-server.ts";
import { FORMS, type Form, luaCall, SIX_TWO_FORMS } from "./upstash-forms.ts";

const FLAG = "#!lua flags=allow-key-locking";
const POLICY = /^ERR Command is not available/;
const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

let stack: RestStack;
let off: RestServer;
let on: Redis;
let offRedis: Redis;

beforeAll(async () => {
  stack = await startRestStack();
  off = await startRestServer({
    redis: { host: stack.redis.host, port: stack.redis.port },
    token: "mode-off",
    upstashMode: false,
  });
  const raw = { enableAutoPipelining: false, automaticDeserialization: false };
  on = stack.client(raw);
  offRedis = stack.client({ ...raw, url: off.url, token: off.token });
});

afterAll(async () => {
  await off.close();
  await stack.stop();
});

beforeEach(() => {
  stack.rest.resetStats();
  off.resetStats();
});

/** A JSON answer: an object, or a pipeline's array (read by index). */
type Answer = { status: number; json: { error?: string; [key: string]: unknown } };

async function post(server: RestServer, path: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
  });
  return { status: response.status, json: (await response.json()) as Answer["json"] };
}

async function setup(form: Form): Promise<void> {
  for (const command of form.setup ?? []) await stack.direct.call(command[0] as string, ...command.slice(1));
}

/** The script's error text, or "" when it ran. */
async function scriptError(redis: Redis, source: string, keys: readonly string[]): Promise<string> {
  return await redis.eval(source, [...keys], []).then(
    () => "",
    (error: Error) => String(error.message).split(", command was:")[0] ?? "",
  );
}

describe.each(FORMS)("$name", (form) => {
  it("is refused as a plain command on /, /pipeline and /multi-exec; the 6.2 form beside it works", async () => {
    await setup(form);
    const expected = form.policy ? POLICY : expect.stringContaining(REDIS62_MARK);
    const single = await post(stack.rest, "/", form.refused);
    expect(single).toEqual({
      status: 400,
      json: { error: form.policy ? expect.stringMatching(POLICY) : expected },
    });
    if (!form.policy) expect(single.json.error).toMatch(/^ERR (syntax error|unknown (sub)?command)/);
    const pipeline = await post(stack.rest, "/pipeline", [form.refused, ["PING"]]);
    expect(pipeline.status).toBe(200);
    expect(pipeline.json).toEqual([{ error: single.json.error }, { result: "PONG" }]);
    const transaction = await post(stack.rest, "/multi-exec", [["PING"], form.refused]);
    expect(transaction).toEqual({ status: 400, json: { error: single.json.error } });
    expect(stack.rest.stats()).toMatchObject({ commands: 1, byCommand: { ping: 1 } });
    if (form.allowed) {
      await setup(form);
      const allowed = await post(stack.rest, "/", form.allowed);
      expect(allowed.status, JSON.stringify(allowed.json)).toBe(200);
    }
  });

  it("is refused inside scripts, flagged or not, at the caller's line", async () => {
    for (const flag of ["-- not flagged", FLAG]) {
      await setup(form);
      const refused = await scriptError(on, `${flag}\nreturn ${luaCall(form.refused)}`, form.keys);
      expect(refused).toContain(REDIS62_MARK);
      expect(refused).toMatch(/^ERR (syntax error|unknown (sub)?command)/);
      expect(refused).toMatch(/on @user_script:2\.$/);
      if (form.allowed && !form.noScript && !(form.movableKeys && flag === FLAG)) {
        await setup(form);
        expect(await scriptError(on, `${flag}\nreturn ${luaCall(form.allowed)}`, form.keys)).toBe("");
      }
    }
  });

  it("gets through with Upstash mode off", async () => {
    await setup(form);
    const single = await post(off, "/", form.refused);
    if (form.policy) expect(single.json.error).toMatch(POLICY);
    else expect(JSON.stringify(single.json)).not.toContain(REDIS62_MARK);
    await setup(form);
    const inScript = await scriptError(offRedis, `return ${luaCall(form.refused)}`, form.keys);
    expect(inScript).not.toContain(REDIS62_MARK);
  });
});

describe("Upstash mode", () => {
  it("leaves the Redis 6.2 forms alone, as plain commands and in scripts", async () => {
    await stack.direct.rpush("um:okl", "a", "b", "a");
    const answers = await post(stack.rest, "/pipeline", SIX_TWO_FORMS);
    expect(JSON.stringify(answers.json)).not.toContain(REDIS62_MARK);
    expect(answers.json[0]).toHaveProperty("result");
    for (const form of SIX_TWO_FORMS) {
      expect(await scriptError(on, `return ${luaCall(form)}`, [])).not.toContain(REDIS62_MARK);
    }
    expect(stack.rest.stats().upstashRefusals).toBe(0);
  });

  it("checks commands named at run time and returns refusals from redis.pcall as error tables", async () => {
    const runtime = "local cmd = ARGV[1]\nreturn redis.call(cmd, KEYS[1], 'v', ARGV[2], ARGV[3])";
    const refused = on.eval(runtime, ["um:rt"], ["set", "nx", "get"]);
    await expect(refused).rejects.toThrow(
      /^ERR syntax error: SET with both NX and GET .*on @user_script:2\./,
    );
    expect(await on.eval(runtime, ["um:rt"], ["SET", "GET", "XX"])).toBeNull();
    const caught = "local r = redis.pcall('EXPIRE', KEYS[1], 10, 'NX')\nreturn {type(r), r.err}";
    expect(await on.eval(caught, ["um:rt"], [])).toEqual(["table", expect.stringContaining(REDIS62_MARK)]);
    const returned = on.eval("return redis.pcall('LMPOP', 1, KEYS[1], 'LEFT')", ["um:rt"], []);
    await expect(returned).rejects.toThrow(/^ERR unknown command 'LMPOP'/);
  });

  it("refuses shebangs other than Upstash's two, which Redis 7 alone would run", async () => {
    for (const shebang of ["#!lua flags=no-writes", "#!lua", "#!lua name=x", `${FLAG},allow-oom`]) {
      const source = `${shebang}\nreturn 1`;
      const refused = await post(stack.rest, "/", ["EVAL", source, 0]);
      expect(refused.status).toBe(400);
      expect(refused.json.error).toMatch(/^ERR Error compiling script: the shebang '#!lua.*Upstash promises/);
      await expect(on.scriptLoad(source)).rejects.toThrow(REDIS62_MARK);
    }
    expect(await offRedis.eval("#!lua flags=no-writes\nreturn 1", [], [])).toBe(1);
    expect(await on.eval(`${FLAG}\nreturn 1`, [], [])).toBe(1);
    expect(await on.eval(`${FLAG},no-writes\nreturn 1`, [], [])).toBe(1);
    expect(await on.eval("#!lua flags=no-writes,allow-key-locking\nreturn 1", [], [])).toBe(1);
    expect(stack.rest.stats()).toMatchObject({ commands: 3, upstashRefusals: 8 });
  });

  it("counts refusals: plain ones and those in script replies", async () => {
    await post(stack.rest, "/pipeline", [["LMPOP", "1", "um:c", "LEFT"], ["EXPIRETIME", "um:c"], ["PING"]]);
    await on.eval("return {redis.pcall('SINTERCARD', 1, KEYS[1]), 1}", ["um:c"], []);
    expect(stack.rest.stats()).toMatchObject({ commands: 2, upstashRefusals: 3 });
    await post(off, "/", ["EXPIRETIME", "um:c"]);
    expect(off.stats().upstashRefusals).toBe(0);
  });

  it("goes on after a redis.call error caught with pcall", async () => {
    await stack.direct.set("um:pc", "text");
    const source = [
      "local ok, err = pcall(redis.call, 'INCR', KEYS[1])",
      "local ok2 = pcall(function() return redis.call('EXPIRE', KEYS[1], 5, 'GT') end)",
      "return {tostring(ok), err, tostring(ok2), redis.call('GET', KEYS[1]), redis.call('STRLEN', KEYS[1])}",
    ].join("\n");
    const expected = ["false", expect.stringMatching(/not an integer/), "false", "text", 4];
    expect(await on.eval(source, ["um:pc"], [])).toEqual(expected);
  });
});

/** One script per kind of call the billing could differ on; `flagged` declares its keys. */
const UNFLAGGED =
  "redis.call('SET', KEYS[1], ARGV[1]) redis.pcall('LPUSH', KEYS[1], 'x')\nreturn redis.call('INCR', KEYS[1])";
const FLAGGED = `${FLAG}\nredis.call('SET', KEYS[1], ARGV[1])\nreturn {redis.call('GET', KEYS[1]), redis.call('TTL', KEYS[1])}`;

/** The same workload through `redis`: EVAL, EVALSHA with the client's fallback, pipelines, transactions. */
async function workload(redis: Redis): Promise<unknown[]> {
  await stack.direct.script("FLUSH");
  const results: unknown[] = [];
  results.push(await redis.eval(UNFLAGGED, ["um:bill"], ["1"]));
  results.push(await redis.eval(FLAGGED, ["um:bill:f"], ["v"]));
  await stack.direct.script("FLUSH");
  const script = redis.createScript(UNFLAGGED);
  results.push(await script.exec(["um:bill"], ["2"]), await script.exec(["um:bill"], ["3"]));
  results.push(await redis.createScript(FLAGGED).exec(["um:bill:f"], ["w"]));
  const pipeline = redis.pipeline();
  pipeline
    .set("um:bill:p", "1")
    .eval(UNFLAGGED, ["um:bill"], ["4"])
    .evalsha(sha1(UNFLAGGED), ["um:bill"], ["5"]);
  results.push(await pipeline.exec());
  const transaction = redis.multi();
  transaction.eval(FLAGGED, ["um:bill:f"], ["x"]).incr("um:bill:p");
  results.push(await transaction.exec());
  results.push(await redis.eval("return redis.call('INCR', KEYS[1])", ["um:bill:f"], []).catch(String));
  return results;
}

describe("scripts rewritten for Upstash mode", () => {
  it("bill exactly as with the mode off", async () => {
    const onResults = await workload(on);
    const offResults = await workload(offRedis);
    expect(onResults).toEqual(offResults);
    const onStats = stack.rest.stats();
    expect(onStats).toEqual(off.stats());
    expect(onStats).toMatchObject({ scriptCalls: 25, keyLockingCalls: 3, upstashRefusals: 0 });
    // The first EVALSHAs found nothing: the unflagged one fell back to EVAL, the flagged one was retried.
    expect(onStats.byCommand).toEqual({ eval: 6, evalsha: 4, set: 1, incr: 1 });
  });

  it("keep the client's SHA: SCRIPT LOAD, EVALSHA, SCRIPT EXISTS, and after SCRIPT FLUSH", async () => {
    await stack.direct.script("FLUSH");
    const sha = await on.scriptLoad(UNFLAGGED);
    expect(sha).toBe(sha1(UNFLAGGED));
    expect(await on.evalsha(sha, ["um:sha"], ["7"])).toBe(8);
    expect(await on.scriptExists(sha, "0".repeat(40))).toEqual([1, 0]);
    expect(await stack.direct.script("EXISTS", sha)).toEqual([0]);
    await stack.direct.script("FLUSH");
    // As with the mode off: a plain EVALSHA gets NOSCRIPT, a Script falls back to EVAL.
    await expect(on.evalsha(sha, ["um:sha"], ["1"])).rejects.toThrow(/^NOSCRIPT/);
    expect(await on.createScript(UNFLAGGED).exec(["um:sha"], ["9"])).toBe(10);
    expect(await on.evalsha(sha, ["um:sha"], ["11"])).toBe(12);
    const flaggedSha = await on.scriptLoad(FLAGGED);
    await stack.direct.script("FLUSH");
    expect(await on.evalsha(flaggedSha, ["um:sha:f"], ["v"])).toEqual(["v", -1]);
  });

  it("do not run a script that reached Redis unchecked: its SHA answers NOSCRIPT", async () => {
    const source = "return redis.call('EXPIRETIME', KEYS[1])";
    const sha = String(await stack.direct.script("LOAD", source));
    expect(await offRedis.evalsha(sha, ["um:u"], [])).toBe(-2);
    await expect(on.evalsha(sha, ["um:u"], [])).rejects.toThrow(/^NOSCRIPT/);
    expect(await on.scriptExists(sha)).toEqual([0]);
    await expect(on.createScript(source).exec(["um:u"], [])).rejects.toThrow(/unknown command 'EXPIRETIME'/);
  });

  it("keep the line numbers of errors, tail calls included", async () => {
    await stack.direct.set("um:lines", "text");
    const body = [
      "local mode = ARGV[1]",
      "if mode == 'tail' then return redis.call('INCR', KEYS[1]) end",
      "if mode == 'lua' then local t = nil return t.x end",
      "if mode == 'compile' then",
      "  local = 1",
      "end",
      "local v = redis.call('INCR', KEYS[1])",
      "return v",
    ].join("\n");
    for (const source of [body, `-- line one\n${body}`, `${FLAG}\n${body}`]) {
      for (const mode of ["tail", "lua", "compile", "call"]) {
        const text = source.replace("mode == 'compile'", mode === "compile" ? "true" : "false");
        const onError = await on.eval(text, ["um:lines"], [mode]).catch((error: Error) => error.message);
        const offError = await offRedis
          .eval(text, ["um:lines"], [mode])
          .catch((error: Error) => error.message);
        expect(onError).toMatch(/user_script:\d/);
        expect(onError).toBe(offError);
      }
    }
  });
});

describe("request limit", () => {
  /** A SET whose JSON body is exactly `bytes` long. */
  const setBody = (bytes: number) => {
    const empty = JSON.stringify(["set", "um:big", ""]);
    return JSON.stringify(["set", "um:big", "x".repeat(bytes - empty.length)]);
  };

  it("is 10,000,000 bytes, answered as Upstash documents", async () => {
    const over = setBody(10_000_001);
    expect(over.length).toBe(10_000_001);
    const refused = await stack.post("/", over);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: "ERR max request size exceeded" });
    expect(await stack.direct.exists("um:big")).toBe(0);
    const under = await stack.post("/", setBody(9_999_000));
    expect(await under.json()).toEqual({ result: "OK" });
    expect(await stack.direct.strlen("um:big")).toBe(
      9_999_000 - JSON.stringify(["set", "um:big", ""]).length,
    );
    const exact = await stack.post("/pipeline", `[${setBody(10_000_000 - 2)}]`);
    expect(await exact.json()).toEqual([{ result: "OK" }]);
  });
});
