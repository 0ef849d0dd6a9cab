/**
 * One redis-server and one REST server in front of it for the whole test run. Tests that count billed
 * commands or inject faults start their own (see `stack.ts`), because those are global to a server.
 */
import type { TestProject } from "vitest/node";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    redisHost: string;
    redisPort: number;
    restUrl: string;
    restToken: string;
  }
}

let redis: RedisServer | undefined;
let rest: RestServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  redis = await startRedisServer();
  // redis62: nimbusq's own scripts and commands keep to forms every Upstash database has.
  rest = await startRestServer({
    redis: { host: redis.host, port: redis.port },
    token: "test-token",
    redis62: true,
  });
  project.provide("redisHost", redis.host);
  project.provide("redisPort", redis.port);
  project.provide("restUrl", rest.url);
  project.provide("restToken", rest.token);
}

export async function teardown(): Promise<void> {
  await rest?.close();
  await redis?.stop();
}
