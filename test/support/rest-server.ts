/**
 * A private redis-server plus REST server for one test file, an independent ioredis connection to look
 * at Redis directly (so the tests never trust the REST server about what Redis saw), and helpers to
 * build clients and send raw HTTP requests.
 */
import { Redis, type RedisConfigNodejs } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { type RestServer, type RestServerOptions, startRestServer } from "../../infra/rest-server/server.ts";

export interface RestStack {
  redis: RedisServer;
  rest: RestServer;
  /** Direct TCP connection to the backing redis-server. */
  direct: IORedis;
  client(options?: Partial<RedisConfigNodejs>): Redis;
  /** POSTs a body to the REST server with the right token unless headers say otherwise. */
  post(path: string, body: string, headers?: Record<string, string>): Promise<Response>;
  /** Calls of `command` Redis has counted (including rejected ones), from INFO commandstats. */
  redisCalls(command: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startRestStack(options: Partial<RestServerOptions> = {}): Promise<RestStack> {
  const redis = await startRedisServer();
  const rest = await startRestServer({
    redis: { host: redis.host, port: redis.port },
    token: "stack-token",
    redis62: true,
    ...options,
  });
  const direct = new IORedis({ host: redis.host, port: redis.port, lazyConnect: true });
  await direct.connect();
  return {
    redis,
    rest,
    direct,
    client: (clientOptions = {}) =>
      new Redis({ url: rest.url, token: rest.token, enableTelemetry: false, ...clientOptions }),
    post: (path, body, headers = {}) =>
      fetch(`${rest.url}${path}`, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${rest.token}`, "content-type": "application/json", ...headers },
      }),
    redisCalls: async (command) => {
      const info = await direct.info("commandstats");
      const match = new RegExp(`^cmdstat_${command}:calls=(\\d+),.*rejected_calls=(\\d+)`, "m").exec(info);
      return match ? Number(match[1]) + Number(match[2]) : 0;
    },
    stop: async () => {
      direct.disconnect();
      await rest.close();
      await redis.stop();
    },
  };
}

/** The four client set-ups the conformance tests run under. */
export const CLIENT_MODES = [
  { automaticDeserialization: true, enableAutoPipelining: true },
  { automaticDeserialization: true, enableAutoPipelining: false },
  { automaticDeserialization: false, enableAutoPipelining: true },
  { automaticDeserialization: false, enableAutoPipelining: false },
] as const;

export function modeName(mode: (typeof CLIENT_MODES)[number]): string {
  const deserialize = mode.automaticDeserialization ? "deserializing" : "raw-strings";
  return `${deserialize}, ${mode.enableAutoPipelining ? "auto-pipelined" : "direct"}`;
}
