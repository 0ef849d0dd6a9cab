/**
 * Values round-trip through the real client exactly as they would against Upstash, under every
 * combination of automatic deserialization and auto-pipelining. The tricky inputs are strings that are
 * valid base64 or JSON, "OK" stored as a value, and non-ASCII text.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_MODES, modeName, type RestStack, startRestStack } from "../support/rest-server.ts";

let stack: RestStack;

beforeAll(async () => {
  stack = await startRestStack();
});

afterAll(async () => {
  await stack.stop();
});

const STRINGS = ["test", "abcd", "OK", "hello world", "", "héllo wörld 🌍🚀 日本語", "QUEUED", "T0s="];

describe.each(CLIENT_MODES)("client %#", (mode) => {
  const name = modeName(mode);
  const prefix = `values:${name}:`;
  const deserializes = mode.automaticDeserialization;

  it(`keeps plain, base64-looking, "OK", empty and unicode strings (${name})`, async () => {
    const redis = stack.client(mode);
    for (const [index, value] of STRINGS.entries()) {
      const key = `${prefix}s${index}`;
      expect(await redis.set(key, value)).toBe("OK");
      expect(await redis.get(key)).toBe(value);
      expect(await stack.direct.get(key)).toBe(value);
    }
  });

  it(`stores numbers, booleans and JSON as text, parsed back only when deserializing (${name})`, async () => {
    const redis = stack.client(mode);
    const cases: [unknown, string, unknown][] = [
      ["123", "123", 123],
      [1.5, "1.5", 1.5],
      [1e21, "1e+21", 1e21],
      [true, "true", true],
      ['{"a":1}', '{"a":1}', { a: 1 }],
      [{ nested: [1, "x"] }, '{"nested":[1,"x"]}', { nested: [1, "x"] }],
      ["null", "null", null],
      ["007", "007", "007"],
      ["12345678901234567890", "12345678901234567890", "12345678901234567890"],
    ];
    for (const [index, [input, stored, parsed]] of cases.entries()) {
      const key = `${prefix}n${index}`;
      await redis.set(key, input);
      expect(await stack.direct.get(key)).toBe(stored);
      expect(await redis.get(key)).toEqual(deserializes ? parsed : stored);
    }
  });

  it(`answers null for missing keys and nested nils (${name})`, async () => {
    const redis = stack.client(mode);
    await redis.set(`${prefix}present`, "here");
    expect(await redis.get(`${prefix}missing`)).toBeNull();
    expect(await redis.mget(`${prefix}present`, `${prefix}missing`)).toEqual(["here", null]);
  });

  it(`returns status replies and integers (${name})`, async () => {
    const redis = stack.client(mode);
    expect(await redis.ping()).toBe("PONG");
    await redis.set(`${prefix}typed`, "x");
    expect(await redis.type(`${prefix}typed`)).toBe("string");
    expect(await redis.incr(`${prefix}counter`)).toBe(1);
    expect(await redis.incrby(`${prefix}counter`, 41)).toBe(42);
    expect(await redis.del(`${prefix}typed`, `${prefix}nothing`)).toBe(1);
  });

  it(`reads hashes (${name})`, async () => {
    const redis = stack.client(mode);
    const key = `${prefix}hash`;
    expect(await redis.hset(key, { a: 1, b: '{"x":1}', c: "str", d: "OK", e: "" })).toBe(5);
    const all: unknown = await redis.hgetall(key);
    if (deserializes) {
      expect(all).toEqual({ a: 1, b: { x: 1 }, c: "str", d: "OK", e: "" });
    } else {
      expect(all).toEqual(["a", "1", "b", '{"x":1}', "c", "str", "d", "OK", "e", ""]);
    }
    expect(await redis.hget(key, "c")).toBe("str");
    expect(await redis.hgetall(`${prefix}no-hash`)).toEqual(deserializes ? null : []);
  });

  it(`reads sorted sets with scores (${name})`, async () => {
    const redis = stack.client(mode);
    const key = `${prefix}zset`;
    expect(await redis.zadd(key, { score: 1.5, member: "a" }, { score: 2, member: "b" })).toBe(2);
    const withScores: unknown = await redis.zrange(key, 0, -1, { withScores: true });
    expect(withScores).toEqual(deserializes ? ["a", 1.5, "b", 2] : ["a", "1.5", "b", "2"]);
    expect(await redis.zscore(key, "b")).toBe(deserializes ? 2 : "2");
    expect(await redis.zcard(key)).toBe(2);
  });

  it(`reads streams (${name})`, async () => {
    const redis = stack.client(mode);
    const key = `${prefix}stream`;
    const first = await redis.xadd(key, "*", { job: '{"id":1}', n: 5 });
    const second = await redis.xadd(key, "*", { job: "plain", n: "007" });
    expect(first).toMatch(/^\d+-\d+$/);
    const entries: unknown = await redis.xrange(key, "-", "+");
    if (deserializes) {
      expect(entries).toEqual({ [first]: { job: { id: 1 }, n: 5 }, [second]: { job: "plain", n: "007" } });
    } else {
      expect(entries).toEqual([
        [first, ["job", '{"id":1}', "n", "5"]],
        [second, ["job", "plain", "n", "007"]],
      ]);
    }
  });

  it(`reads lists and sets (${name})`, async () => {
    const redis = stack.client(mode);
    await redis.rpush(`${prefix}list`, "OK", "abcd", "🌍");
    expect(await redis.lrange(`${prefix}list`, 0, -1)).toEqual(["OK", "abcd", "🌍"]);
    await redis.sadd(`${prefix}set`, "only");
    expect(await redis.smembers(`${prefix}set`)).toEqual(["only"]);
  });
});

describe("without Upstash-Encoding: base64", () => {
  it("sends raw UTF-8 strings that the client takes as they are", async () => {
    const redis = stack.client({ responseEncoding: false, automaticDeserialization: false });
    for (const [index, value] of STRINGS.entries()) {
      await redis.set(`raw:${index}`, value);
      expect(await redis.get(`raw:${index}`)).toBe(value);
    }
    await redis.hset("raw:hash", { f: "🌍" });
    expect(await redis.hgetall("raw:hash")).toEqual(["f", "🌍"]);
  });

  it("turns invalid UTF-8 into U+FFFD in raw mode but keeps the exact bytes in base64 mode", async () => {
    await stack.direct.set("raw:binary", Buffer.from([0x61, 0xff, 0x62]));
    const raw = await stack.post("/", '["get","raw:binary"]');
    expect(await raw.json()).toEqual({ result: "a\ufffdb" });
    const encoded = await stack.post("/", '["get","raw:binary"]', { "upstash-encoding": "base64" });
    expect(await encoded.json()).toEqual({ result: Buffer.from([0x61, 0xff, 0x62]).toString("base64") });
  });
});

describe("integers", () => {
  it("are written with Redis's exact digits, even beyond 2^53", async () => {
    await stack.direct.set("int:big", "9007199254740994");
    const response = await stack.post("/", '["incr","int:big"]');
    expect(await response.text()).toBe('{"result":9007199254740995}');
    const negative = await stack.post("/", '["decrby","int:neg",5]');
    expect(await negative.text()).toBe('{"result":-5}');
  });
});
