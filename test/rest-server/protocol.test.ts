/**
 * The HTTP contract at the wire level: auth, malformed bodies, unknown routes, size limits, response
 * encoding, sync tokens, keep-alive, and the commands Upstash's REST API refuses (which must never
 * reach Redis). Every refusal is a JSON answer on a live socket.
 */
import { errors } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { type RestStack, startRestStack } from "../support/rest-server.ts";

let stack: RestStack;

beforeAll(async () => {
  stack = await startRestStack();
});

afterAll(async () => {
  await stack.stop();
});

async function expectJsonError(response: Response, status: number, error: string | RegExp): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/json");
  const body = (await response.json()) as { error?: unknown; result?: unknown };
  expect(body.result).toBeUndefined();
  if (typeof error === "string") expect(body.error).toBe(error);
  else expect(body.error).toMatch(error);
}

describe("authentication", () => {
  it("answers 401 JSON for a wrong or missing token", async () => {
    const wrong = await stack.post("/", '["ping"]', { authorization: "Bearer nope" });
    await expectJsonError(wrong, 401, "WRONGPASS invalid or missing auth token");
    const missing = await fetch(`${stack.rest.url}/pipeline`, { method: "POST", body: '[["ping"]]' });
    await expectJsonError(missing, 401, "WRONGPASS invalid or missing auth token");
    const admin = await fetch(`${stack.rest.url}/__nimbusq/stats`);
    await expectJsonError(admin, 401, "WRONGPASS invalid or missing auth token");
  });

  it("accepts the token as ?_token=", async () => {
    const response = await stack.post(`/?_token=${stack.rest.token}`, '["echo","hi"]', { authorization: "" });
    expect(await response.json()).toEqual({ result: "hi" });
  });

  it("makes the client throw an UpstashError for a wrong token", async () => {
    const redis = stack.client({ token: "wrong" });
    await expect(redis.get("k")).rejects.toThrow(/WRONGPASS invalid or missing auth token/);
  });
});

describe("malformed requests", () => {
  it.each([
    ["/", "", /empty request body/],
    ["/", "{not json", /not valid JSON/],
    ["/", '{"cmd":"get"}', /must be a JSON array/],
    ["/", "[]", /empty command/],
    ["/", '["set","k",null]', /^ERR invalid argument at index 2: null/],
    ["/", '["set","k",{"a":1}]', /^ERR invalid argument at index 2: an object/],
    ["/pipeline", '["get","k"]', /command 1 must be a JSON array/],
    ["/pipeline", "[]", /pipeline body holds no commands/],
    ["/pipeline", '[["get","k"],[]]', /empty command \(command 2\)/],
    ["/multi-exec", '[["set","k",[1]]]', /^ERR invalid argument at index 2 of command 1: an array/],
    ["/multi-exec", '"set"', /multi-exec body must be a JSON array of commands/],
  ])("answers 400 JSON for %s %s", async (path, body, error) => {
    await expectJsonError(await stack.post(path, body), 400, error);
  });

  it("runs nothing from a pipeline with one malformed command", async () => {
    const response = await stack.post("/pipeline", '[["set","malformed:a","1"],["set","malformed:b",null]]');
    expect(response.status).toBe(400);
    expect(await stack.direct.exists("malformed:a")).toBe(0);
  });

  it("refuses bodies that are not JSON by content type", async () => {
    const response = await stack.post("/", '["ping"]', { "content-type": "text/plain" });
    await expectJsonError(response, 400, "ERR content-type must be application/json");
    const charset = await stack.post("/", '["ping"]', { "content-type": "application/json; charset=utf-8" });
    expect(await charset.json()).toEqual({ result: "PONG" });
  });

  it("makes an undefined argument fail loudly in the client", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    await expect(redis.set("undefined:k", undefined)).rejects.toBeInstanceOf(errors.UpstashError);
    expect(await stack.direct.exists("undefined:k")).toBe(0);
  });

  it("answers 404 and 405 as JSON, and GET / as a liveness check", async () => {
    await expectJsonError(await stack.post("/set/k/v", ""), 404, /unknown endpoint \/set\/k\/v/);
    const get = await fetch(`${stack.rest.url}/pipeline`, {
      headers: { authorization: `Bearer ${stack.rest.token}` },
    });
    await expectJsonError(get, 405, /method GET not allowed on \/pipeline/);
    expect(get.headers.get("allow")).toBe("POST");
    const live = await fetch(`${stack.rest.url}/`);
    expect(live.status).toBe(200);
    expect(live.headers.get("content-type")).toBe("application/json");
  });
});

describe("size limit", () => {
  it("answers 400 JSON after reading an oversized body, and keeps the connection", async () => {
    const small = await startRestServer({
      redis: { host: stack.redis.host, port: stack.redis.port },
      token: "t",
      maxBodyBytes: 1024,
    });
    try {
      const headers = { authorization: "Bearer t", "content-type": "application/json" };
      const big = JSON.stringify(["set", "size:k", "x".repeat(200_000)]);
      const response = await fetch(`${small.url}/`, { method: "POST", headers, body: big });
      await expectJsonError(response, 400, "ERR max request size exceeded");
      const after = await fetch(`${small.url}/`, { method: "POST", headers, body: '["ping"]' });
      expect(await after.json()).toEqual({ result: "PONG" });
      expect(await stack.direct.exists("size:k")).toBe(0);
      const redis = stack.client({ url: small.url, token: "t" });
      await expect(redis.set("size:k", "y".repeat(5000))).rejects.toThrow(/^ERR max request size exceeded/);
    } finally {
      await small.close();
    }
  });
});

describe("responses", () => {
  it("encodes every nested string, but not a top-level OK, with Upstash-Encoding: base64", async () => {
    const script = "return {redis.call('SET', KEYS[1], 'v'), redis.status_reply('OK'), 'abc', 7, false}";
    const body = JSON.stringify(["eval", script, 1, "enc:k"]);
    const encoded = await stack.post("/", body, { "upstash-encoding": "base64" });
    expect(await encoded.text()).toBe('{"result":["T0s=","T0s=","YWJj",7,null]}');
    const top = await stack.post("/", '["set","enc:k","OK"]', { "upstash-encoding": "base64" });
    expect(await top.text()).toBe('{"result":"OK"}');
    const value = await stack.post("/", '["get","enc:k"]', { "upstash-encoding": "base64" });
    expect(await value.text()).toBe('{"result":"T0s="}');
    const status = await stack.post("/", '["type","enc:k"]', { "upstash-encoding": "base64" });
    expect(await status.text()).toBe('{"result":"c3RyaW5n"}');
    const raw = await stack.post("/", body);
    expect(await raw.text()).toBe('{"result":["OK","OK","abc",7,null]}');
  });

  it("answers Redis errors on / with 400 and the verbatim text, never encoded", async () => {
    await stack.direct.set("err:k", "x");
    const response = await stack.post("/", '["incr","err:k"]', { "upstash-encoding": "base64" });
    await expectJsonError(response, 400, "ERR value is not an integer or out of range");
  });

  it("sends an incrementing upstash-sync-token on successes, which the client keeps", async () => {
    const first = await stack.post("/", '["ping"]');
    const second = await stack.post("/pipeline", '[["ping"]]');
    const firstToken = first.headers.get("upstash-sync-token");
    const secondToken = second.headers.get("upstash-sync-token");
    expect(firstToken).toBeTruthy();
    expect(secondToken).toBeTruthy();
    expect(secondToken).not.toBe(firstToken);
    const failed = await stack.post("/", '["incr","err:k"]');
    expect(failed.headers.get("upstash-sync-token")).toBeNull();
    const redis = stack.client({ enableAutoPipelining: false });
    await redis.ping();
    const kept = redis.readYourWritesSyncToken;
    await redis.ping();
    expect(kept).toMatch(/\S/);
    expect(redis.readYourWritesSyncToken).not.toBe(kept);
  });

  it("keeps idle connections open longer than the client does", async () => {
    const response = await stack.post("/", '["ping"]');
    expect(response.headers.get("keep-alive")).toBe("timeout=65");
  });
});

describe("commands Upstash's REST API refuses", () => {
  const refused: [string, string[]][] = [
    ["BLPOP", ["blpop", "refused:l", "1"]],
    ["BRPOP", ["brpop", "refused:l", "1"]],
    ["BRPOPLPUSH", ["brpoplpush", "refused:l", "refused:m", "1"]],
    ["BLMOVE", ["blmove", "refused:l", "refused:m", "LEFT", "RIGHT", "1"]],
    ["BLMPOP", ["blmpop", "1", "1", "refused:l", "LEFT"]],
    ["BZPOPMIN", ["bzpopmin", "refused:z", "1"]],
    ["BZPOPMAX", ["bzpopmax", "refused:z", "1"]],
    ["BZMPOP", ["bzmpop", "1", "1", "refused:z", "MIN"]],
    ["XREAD", ["xread", "count", "1", "BLOCK", "100", "STREAMS", "refused:s", "$"]],
    ["XREADGROUP", ["xreadgroup", "GROUP", "g", "c", "block", "100", "STREAMS", "refused:s", ">"]],
    ["WATCH", ["watch", "refused:k"]],
    ["UNWATCH", ["unwatch"]],
    ["MULTI", ["multi"]],
    ["EXEC", ["exec"]],
    ["DISCARD", ["discard"]],
    ["SUBSCRIBE", ["subscribe", "ch"]],
    ["PSUBSCRIBE", ["psubscribe", "ch*"]],
    ["MONITOR", ["monitor"]],
    ["SELECT", ["select", "1"]],
    ["AUTH", ["auth", "x"]],
    ["HELLO", ["hello", "3"]],
    ["CLIENT", ["client", "setname", "x"]],
    ["QUIT", ["quit"]],
    ["RESET", ["reset"]],
  ];

  it.each(refused)("refuses %s on / without Redis seeing it", async (name, command) => {
    const response = await stack.post("/", JSON.stringify(command));
    await expectJsonError(response, 400, new RegExp(`^ERR Command is not available: '${name}'`));
    expect(await stack.redisCalls(name.toLowerCase())).toBe(0);
  });

  it("refuses per entry in a pipeline and runs the rest", async () => {
    const response = await stack.post(
      "/pipeline",
      '[["set","refused:p","1"],["blpop","refused:l",0],["get","refused:p"]]',
    );
    expect(response.status).toBe(200);
    const entries = (await response.json()) as { result?: unknown; error?: string }[];
    expect(entries[0]).toEqual({ result: "OK" });
    expect(entries[1]?.error).toMatch(/^ERR Command is not available: 'BLPOP'/);
    expect(entries[1]).not.toHaveProperty("result");
    expect(entries[2]).toEqual({ result: "1" });
  });

  it("refuses a whole transaction containing one, running nothing", async () => {
    const response = await stack.post("/multi-exec", '[["set","refused:t","1"],["select","2"]]');
    await expectJsonError(response, 400, /^ERR Command is not available: 'SELECT'/);
    expect(await stack.direct.exists("refused:t")).toBe(0);
  });

  it("allows PING, ECHO, non-blocking XREAD and a group called block", async () => {
    await stack.direct.xadd("allowed:s", "1-1", "f", "v");
    await stack.direct.xgroup("CREATE", "allowed:s", "block", "0");
    const body = JSON.stringify([
      ["ping"],
      ["echo", "hello"],
      ["xread", "COUNT", "1", "STREAMS", "allowed:s", "0"],
      ["xreadgroup", "GROUP", "block", "block", "STREAMS", "allowed:s", ">"],
    ]);
    const response = await stack.post("/pipeline", body);
    expect(await response.json()).toEqual([
      { result: "PONG" },
      { result: "hello" },
      { result: [["allowed:s", [["1-1", ["f", "v"]]]]] },
      { result: [["allowed:s", [["1-1", ["f", "v"]]]]] },
    ]);
  });

  it("makes the client throw an UpstashError with Upstash's text", async () => {
    const redis = stack.client();
    await expect(redis.exec(["BLPOP", "refused:l", "1"])).rejects.toThrow(
      /^ERR Command is not available: 'BLPOP'\. See https:\/\/docs\.upstash\.com/,
    );
  });
});
