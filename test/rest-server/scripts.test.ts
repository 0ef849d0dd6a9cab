/**
 * EVAL and EVALSHA through the real client: nested Lua tables, nils, integers, status replies (which
 * must stay decodable when nested), errors, and the client's EVALSHA → NOSCRIPT → EVAL fallback, which
 * only works if the NOSCRIPT text reaches the client verbatim.
 */
import { createHash } from "node:crypto";
import { errors } from "@upstash/redis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startRestServer } from "../../infra/rest-server/server.ts";
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
  const key = `scripts:${name}`;
  const deserializes = mode.automaticDeserialization;

  it(`returns nested tables with nils, integers and strings (${name})`, async () => {
    const redis = stack.client(mode);
    const result = await redis.eval(
      "return {KEYS[1], ARGV[1], 42, false, {1, 'x', {'deep', 'OK'}}, 3.9, '', 'abcd'}",
      [key],
      ["7"],
    );
    expect(result).toEqual([key, deserializes ? 7 : "7", 42, null, [1, "x", ["deep", "OK"]], 3, "", "abcd"]);
  });

  it(`returns nil and plain integers (${name})`, async () => {
    const redis = stack.client(mode);
    expect(await redis.eval("return nil", [], [])).toBeNull();
    expect(await redis.eval("return false", [], [])).toBeNull();
    expect(await redis.eval("return tonumber(ARGV[1]) * 2", [], ["21"])).toBe(42);
    expect(await redis.eval("return true", [], [])).toBe(1);
  });

  it(`keeps top-level and nested status replies readable (${name})`, async () => {
    const redis = stack.client(mode);
    expect(await redis.eval("return redis.call('SET', KEYS[1], ARGV[1])", [key], ["v"])).toBe("OK");
    expect(await redis.eval("return redis.status_reply('PONG2')", [], [])).toBe("PONG2");
    const nested = await redis.eval(
      "return {redis.call('SET', KEYS[1], ARGV[1]), redis.status_reply('PONG2'), redis.call('TYPE', KEYS[1])}",
      [key],
      ["v"],
    );
    expect(nested).toEqual(["OK", "PONG2", "string"]);
  });

  it(`passes a script error through as an UpstashError (${name})`, async () => {
    const redis = stack.client(mode);
    await redis.set(key, "not a number");
    const failure = redis.eval("return redis.call('INCR', KEYS[1])", [key], []);
    await expect(failure).rejects.toBeInstanceOf(errors.UpstashError);
    await expect(failure).rejects.toThrow(/ERR value is not an integer or out of range/);
  });

  it(`turns an error nested in a table into its text (${name})`, async () => {
    const redis = stack.client(mode);
    const result = await redis.eval(
      "return {1, redis.error_reply('MYERR nested'), {redis.pcall('NOPE')}}",
      [],
      [],
    );
    expect(result).toEqual([1, "MYERR nested", [expect.stringMatching(/Unknown Redis command/)]]);
  });
});

describe("EVALSHA with the NOSCRIPT fallback", () => {
  beforeEach(async () => {
    await stack.direct.script("FLUSH");
  });

  it.each([true, false])("runs EVALSHA, then EVAL, then EVALSHA (auto-pipelining %s)", async (auto) => {
    const redis = stack.client({ enableAutoPipelining: auto, automaticDeserialization: false });
    const source = `return {KEYS[1], ARGV[1], '${String(auto)}'}`;
    const script = redis.createScript(source);
    stack.rest.resetStats();
    expect(await script.exec(["sk"], ["sa"])).toEqual(["sk", "sa", String(auto)]);
    expect(stack.rest.stats().byCommand).toEqual({ evalsha: 1, eval: 1 });
    expect(await script.exec(["sk"], ["sb"])).toEqual(["sk", "sb", String(auto)]);
    expect(stack.rest.stats().byCommand).toEqual({ evalsha: 2, eval: 1 });
    const sha = createHash("sha1").update(source).digest("hex");
    expect(await redis.scriptExists(sha)).toEqual([1]);
  });

  it("answers the exact NOSCRIPT text with 400 on /", async () => {
    const response = await stack.post("/", `["evalsha","${"0".repeat(40)}",0]`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "NOSCRIPT No matching script. Please use EVAL." });
  });

  it("makes plain evalsha throw NOSCRIPT, with no fallback", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    await expect(redis.evalsha("0".repeat(40), [], [])).rejects.toThrow(/^NOSCRIPT No matching script/);
  });

  it("loads scripts with SCRIPT LOAD and runs read-only variants with Upstash mode off", async () => {
    const redis = stack.client({ enableAutoPipelining: false, automaticDeserialization: false });
    const sha = await redis.scriptLoad("return ARGV[1] .. '!'");
    expect(sha).toBe(createHash("sha1").update("return ARGV[1] .. '!'").digest("hex"));
    expect(await redis.evalsha(sha, [], ["x"])).toBe("x!");
    // EVAL_RO and EVALSHA_RO are Redis 7.0 commands, refused in Upstash mode (upstash-mode.test.ts).
    const modeOff = await startRestServer({
      redis: { host: stack.redis.host, port: stack.redis.port },
      token: "scripts-ro",
      upstashMode: false,
    });
    try {
      const readOnly = stack.client({ url: modeOff.url, token: modeOff.token, enableAutoPipelining: false });
      const offSha = await readOnly.scriptLoad("return ARGV[1] .. '!'");
      expect(await readOnly.evalshaRo(offSha, [], ["y"])).toBe("y!");
      const get = "return redis.call('GET', KEYS[1])";
      expect(await readOnly.evalRo(get, ["scripts:missing"], [])).toBeNull();
    } finally {
      await modeOff.close();
    }
  });
});
