/**
 * The stand-in follows Upstash's current promise, Redis "up to 8.2" (issue 25): by default the REST
 * server lets through the Redis 7 forms the backing redis-server has, and Upstash's own shebang
 * flags (`no-writes`, `allow-key-locking`, both), refusing only what Upstash refuses: commands it
 * does not serve over REST, a read-only script that writes, a key-locking script that touches an
 * undeclared key. With `redis62` (nimbusq's own tests) the 7.0 forms are refused as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RestStack, startRestStack } from "../support/rest-server.ts";

let stack: RestStack;
let strict: RestStack;
beforeAll(async () => {
  stack = await startRestStack({ redis62: false });
  strict = await startRestStack({ redis62: true });
});
afterAll(async () => {
  await stack?.stop();
  await strict?.stop();
});

async function command(
  on: RestStack,
  args: unknown[],
): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await on.post("/", JSON.stringify(args));
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

describe("Upstash mode, Redis up to 8.2", () => {
  const sevenOh: [string, unknown[]][] = [
    ["SET with NX and GET", ["SET", "u82:k", "v", "NX", "GET"]],
    ["EXPIRE with NX", ["EXPIRE", "u82:k", "100", "NX"]],
    ["LMPOP", ["LMPOP", "1", "u82:list", "LEFT"]],
    ["SINTERCARD", ["SINTERCARD", "1", "u82:set"]],
    ["XADD with an <ms>-* id", ["XADD", "u82:stream", "1700000000000-*", "f", "v"]],
    ["BITCOUNT with BIT", ["BITCOUNT", "u82:k", "0", "1", "BIT"]],
  ];
  for (const [label, args] of sevenOh) {
    it(`lets ${label} through (refused only with redis62)`, async () => {
      expect((await command(stack, args)).status).toBe(200);
      const refused = await command(strict, args);
      expect(refused.status).toBe(400);
      expect(String(refused.body.error)).toMatch(/Upstash promises Redis 6.2/);
    });
  }

  it("runs a 7.0 form inside a script", async () => {
    const script = 'return redis.call("SET", KEYS[1], "w", "NX", "GET")';
    expect((await command(stack, ["EVAL", script, 1, "u82:k"])).status).toBe(200);
    expect((await command(strict, ["EVAL", script, 1, "u82:k"])).status).toBe(400);
  });

  it("accepts #!lua flags=no-writes and no-writes,allow-key-locking; a read-only script that writes is refused", async () => {
    await command(stack, ["SET", "u82:read", "value"]);
    for (const flags of ["no-writes", "no-writes,allow-key-locking", "allow-key-locking,no-writes"]) {
      const read = `#!lua flags=${flags}\nreturn redis.call("GET", KEYS[1])`;
      const answer = await command(stack, ["EVAL", read, 1, "u82:read"]);
      expect({ flags, status: answer.status }).toEqual({ flags, status: 200 });
      expect(answer.body.result).toBe("value");
      const write = `#!lua flags=${flags}\nreturn redis.call("SET", KEYS[1], "x")`;
      const refused = await command(stack, ["EVAL", write, 1, "u82:read"]);
      expect(refused.status).toBe(400);
      expect(String(refused.body.error)).toMatch(/Write commands are not allowed from read-only scripts/);
    }
    // With the strict 6.2 promise only allow-key-locking alone is a shebang.
    const readOnly = '#!lua flags=no-writes\nreturn redis.call("GET", KEYS[1])';
    expect((await command(strict, ["EVAL", readOnly, 1, "u82:read"])).status).toBe(400);
  });

  it("refuses what Upstash refuses: an undeclared key under allow-key-locking, a blocking command", async () => {
    const undeclared = '#!lua flags=no-writes,allow-key-locking\nreturn redis.call("GET", "u82:elsewhere")';
    const refused = await command(stack, ["EVAL", undeclared, 0]);
    expect(refused.status).toBe(400);
    expect(String(refused.body.error)).toMatch(/undeclared|not declared|KEYS/i);
    const blocking = await command(stack, ["BLPOP", "u82:list", "1"]);
    expect(blocking.status).toBe(400);
  });
});
