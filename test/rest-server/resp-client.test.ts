/**
 * The hand-written RESP2 client: the parser on replies split at every possible byte, and real
 * connections to redis-server, including what happens when Redis drops them or goes away.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisServer } from "../../infra/redis-server.ts";
import { RespConnection, RespParser, type RespReply } from "../../infra/rest-server/resp-client.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { type RestStack, startRestStack } from "../support/rest-server.ts";

let stack: RestStack;

beforeAll(async () => {
  stack = await startRestStack();
});

afterAll(async () => {
  await stack.stop();
});

function parseAll(chunks: Buffer[]): RespReply[] {
  const replies: RespReply[] = [];
  const parser = new RespParser((reply) => replies.push(reply));
  for (const chunk of chunks) parser.push(chunk);
  return replies;
}

const bulk = (text: string): RespReply => ({ kind: "bulk", bytes: Buffer.from(text) });

describe("RespParser", () => {
  const wire = Buffer.from(
    "+OK\r\n-ERR bad\r\n:-42\r\n:9007199254740995\r\n$-1\r\n*-1\r\n*0\r\n$0\r\n\r\n" +
      "*3\r\n$5\r\nhe\r\nl\r\n*2\r\n-WRONGTYPE x\r\n*1\r\n+QUEUED\r\n:1\r\n",
  );
  const expected: RespReply[] = [
    { kind: "status", text: "OK" },
    { kind: "error", text: "ERR bad" },
    { kind: "integer", digits: "-42" },
    { kind: "integer", digits: "9007199254740995" },
    { kind: "nil" },
    { kind: "nil" },
    { kind: "array", items: [] },
    bulk(""),
    {
      kind: "array",
      items: [
        bulk("he\r\nl"),
        {
          kind: "array",
          items: [
            { kind: "error", text: "WRONGTYPE x" },
            { kind: "array", items: [{ kind: "status", text: "QUEUED" }] },
          ],
        },
        { kind: "integer", digits: "1" },
      ],
    },
  ];

  it("parses every reply type in one chunk", () => {
    expect(parseAll([wire])).toEqual(expected);
  });

  it("parses the same replies split at every byte boundary, and byte by byte", () => {
    for (let split = 1; split < wire.length; split++) {
      expect(parseAll([wire.subarray(0, split), wire.subarray(split)])).toEqual(expected);
    }
    expect(parseAll([...wire].map((byte) => Buffer.from([byte])))).toEqual(expected);
  });

  it("rejects bytes that are not RESP", () => {
    expect(() => parseAll([Buffer.from("?what\r\n")])).toThrow(/RESP protocol error/);
  });
});

describe("RespConnection against redis-server", () => {
  it("pipelines commands and keeps binary, large and nested replies exact", async () => {
    const connection = await RespConnection.open(stack.redis.host, stack.redis.port);
    try {
      const binary = Buffer.from([0, 255, 13, 10, 36, 42]);
      const large = "z".repeat(5 * 1024 * 1024);
      const replies = await connection.send([
        ["SET", "resp:bin", binary],
        ["GET", "resp:bin"],
        ["SET", "resp:large", large],
        ["STRLEN", "resp:large"],
        ["GET", "resp:large"],
        ["EVAL", "return {1, {redis.error_reply('MYERR one'), 'x'}, false}", "0"],
        ["NOPE"],
      ]);
      expect(replies[1]).toEqual({ kind: "bulk", bytes: binary });
      expect(replies[3]).toEqual({ kind: "integer", digits: String(large.length) });
      expect(replies[4]?.kind === "bulk" && replies[4].bytes.toString() === large).toBe(true);
      expect(replies[5]).toEqual({
        kind: "array",
        items: [
          { kind: "integer", digits: "1" },
          { kind: "array", items: [{ kind: "error", text: "MYERR one" }, bulk("x")] },
          { kind: "nil" },
        ],
      });
      expect(replies[6]?.kind).toBe("error");
    } finally {
      connection.close();
    }
  });

  it("fails pending and later commands once Redis closes the connection", async () => {
    const connection = await RespConnection.open(stack.redis.host, stack.redis.port);
    await expect(connection.call("QUIT")).resolves.toEqual({ kind: "status", text: "OK" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connection.healthy).toBe(false);
    await expect(connection.call("PING")).rejects.toThrow(/closed/);
  });

  it("refuses to open a connection to a closed port", async () => {
    await expect(RespConnection.open("127.0.0.1", 1)).rejects.toThrow(
      /cannot connect to redis at 127.0.0.1:1/,
    );
  });
});

describe("backend failures seen through HTTP", () => {
  it("replaces pooled connections that Redis killed", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    await Promise.all(Array.from({ length: 8 }, (_, index) => redis.set(`resp:kill${index}`, "v")));
    await stack.direct.client("KILL", "TYPE", "normal", "SKIPME", "yes");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const values = await Promise.all(Array.from({ length: 8 }, (_, index) => redis.get(`resp:kill${index}`)));
    expect(values).toEqual(Array(8).fill("v"));
    expect(await redis.eval("return redis.call('GET', KEYS[1])", ["resp:kill0"], [])).toBe("v");
  });

  it("answers 500 JSON when Redis is gone, and refuses to start without it", async () => {
    const doomed = await startRedisServer();
    const rest = await startRestServer({ redis: { host: doomed.host, port: doomed.port }, token: "t" });
    try {
      await doomed.stop();
      const response = await fetch(`${rest.url}/`, {
        method: "POST",
        headers: { authorization: "Bearer t", "content-type": "application/json" },
        body: '["ping"]',
      });
      expect(response.status).toBe(500);
      expect(((await response.json()) as { error: string }).error).toMatch(/^ERR redis request failed/);
    } finally {
      await rest.close();
    }
    await expect(
      startRestServer({ redis: { host: doomed.host, port: doomed.port }, token: "t" }),
    ).rejects.toThrow(/cannot connect to redis/);
  });
});
