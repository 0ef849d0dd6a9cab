/**
 * A digest of everything under a key prefix: every key's name and DUMP, hashed. Equal digests before
 * and after a refused request mean it wrote nothing (not even a key it then removed with another value).
 */
import { createHash } from "node:crypto";
import type { Redis as IORedis } from "ioredis";
import { keysUnder } from "./stack.ts";

export async function keyspaceDigest(direct: IORedis, prefix: string): Promise<string> {
  const hash = createHash("sha256");
  for (const key of await keysUnder(direct, prefix)) {
    const dump = (await direct.dumpBuffer(key)) ?? Buffer.alloc(0);
    hash.update(`${key.length}:${key}${dump.length}:`).update(dump);
  }
  return hash.digest("hex");
}
