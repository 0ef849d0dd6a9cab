/**
 * What core tests need: an `@upstash/redis` client through a REST server, a direct ioredis
 * connection for BullMQ (the interop peer) and for looking at Redis without trusting nimbusq, and a
 * fresh key prefix per test so tests never see each other's keys.
 */
import type { Redis } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { afterAll, beforeEach, inject, vi } from "vitest";
import { createRedis } from "../../core/redis/client.ts";
import type { TcpRedis } from "../../core/redis/tcp-redis.ts";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";

let counter = 0;

/** A prefix no other test uses, e.g. `t-4f2a-3`. */
export function uniquePrefix(label = "t"): string {
  counter += 1;
  return `${label}-${process.pid.toString(36)}-${Date.now().toString(36)}-${counter}`;
}

let tcp: TcpRedis | undefined;

/**
 * The shared REST server of the test run (global setup); or, in the run over TCP (NQ_TRANSPORT=tcp:
 * vitest.config.ts's "over-tcp" project), one TCP client of the shared redis-server for the file —
 * the same suites then run with no REST server between (issue 27). Typed as the REST client: the
 * files that run over TCP use only what core takes of it.
 */
export function sharedRedis(): Redis {
  if (process.env.NQ_TRANSPORT === "tcp") {
    if (!tcp) {
      const client = createRedis({ url: `redis://${inject("redisHost")}:${inject("redisPort")}` });
      tcp = client;
      afterAll(() => client.close());
    }
    return tcp as unknown as Redis;
  }
  return createRedis({ url: inject("restUrl"), token: inject("restToken") });
}

/** A direct TCP connection to the shared redis-server, as BullMQ wants it. */
export function sharedConnection(): IORedis {
  return new IORedis({ host: inject("redisHost"), port: inject("redisPort"), maxRetriesPerRequest: null });
}

/** A direct connection to the shared redis-server for one test file, closed after its tests. */
export function directConnectionForFile(): IORedis {
  const connection = sharedConnection();
  afterAll(() => connection.disconnect());
  return connection;
}

/** Keeps console.warn quiet (and inspectable as a spy) during each test of the file. */
/**
 * Keeps warnings quiet during each test of the file and inspectable through the `console.warn` spy:
 * the functions' structured logger (functions/log.ts) writes JSON lines to stdout, and each of its WARN
 * lines reaches the spy as its `message`, so a test reads what was warned whichever way it was written.
 */
export function silenceWarnings(): void {
  beforeEach(() => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, "write").mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      const text = String(chunk);
      const lines = text.split("\n").filter((line) => line.startsWith("{"));
      const warnings = lines.flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { level?: string; message?: string };
          return entry.level === "WARN" ? [String(entry.message)] : [];
        } catch {
          return [];
        }
      });
      if (warnings.length === 0) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      for (const message of warnings) warn(message);
      return true;
    }) as typeof process.stdout.write);
    return () => vi.restoreAllMocks();
  });
}

export function sharedConnectionOptions(): { host: string; port: number } {
  return { host: inject("redisHost"), port: inject("redisPort") };
}

/** Every key under a prefix, sorted (SCAN, not KEYS, so a big shared server is not blocked). */
export async function keysUnder(direct: IORedis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await direct.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys.sort();
}

/** A private redis-server and REST server: for counting billed commands or injecting faults. */
export interface PrivateStack {
  redisServer: RedisServer;
  rest: RestServer;
  redis: Redis;
  direct: IORedis;
  stop(): Promise<void>;
}

export async function startPrivateStack(): Promise<PrivateStack> {
  const redisServer = await startRedisServer();
  const rest = await startRestServer({
    redis: { host: redisServer.host, port: redisServer.port },
    token: "private",
    redis62: true,
  });
  const direct = new IORedis({ host: redisServer.host, port: redisServer.port, maxRetriesPerRequest: null });
  return {
    redisServer,
    rest,
    redis: createRedis({ url: rest.url, token: rest.token }),
    direct,
    stop: async () => {
      direct.disconnect();
      await rest.close();
      await redisServer.stop();
    },
  };
}
