/**
 * `npm start`: nimbusq on one machine with no cloud account. Starts a redis-server on a free port (or
 * uses REDIS_URL), the Upstash-compatible REST server in front of it, runs the producer demo, and
 * keeps serving until Ctrl-C so your own code can use the printed URL and token.
 *
 * Environment: REDIS_URL, PORT (REST server, default 8079; 0 = any free port), NIMBUSQ_DEMO=0 to skip
 * the demo, NIMBUSQ_EXIT_AFTER_DEMO=1 to stop after it.
 */
import { createRedis } from "../../core/index.ts";
import { type RedisServer, startRedisServer } from "../redis-server.ts";
import { startRestServer } from "../rest-server/server.ts";
import { runProducerDemo } from "./producer-demo.ts";

function redisTarget(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  if (parsed.protocol !== "redis:") throw new Error(`REDIS_URL must start with redis://, got ${url}`);
  return { host: parsed.hostname, port: Number(parsed.port || 6379) };
}

async function main(): Promise<void> {
  const log = (line: string) => console.log(`[nimbusq] ${line}`);
  let ownRedis: RedisServer | undefined;
  const target = process.env.REDIS_URL
    ? redisTarget(process.env.REDIS_URL)
    : await startRedisServer().then((server) => {
        ownRedis = server;
        return { host: server.host, port: server.port };
      });
  log(`redis-server at ${target.host}:${target.port}${ownRedis ? " (temporary, removed on exit)" : ""}`);
  const token = process.env.UPSTASH_REDIS_REST_TOKEN ?? "dev-token";
  const port = Number(process.env.PORT ?? 8079);
  const rest = await startRestServer({ redis: target, token, port }).catch(async (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    log(`port ${port} is taken; using a free one`);
    return await startRestServer({ redis: target, token, port: 0 });
  });
  log(`Upstash-compatible REST API at ${rest.url}`);
  log(`  export UPSTASH_REDIS_REST_URL=${rest.url} UPSTASH_REDIS_REST_TOKEN=${token}`);

  const stop = async () => {
    await rest.close();
    await ownRedis?.stop();
    log("stopped");
  };
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    void stop().then(() => process.exit(0));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  if (process.env.NIMBUSQ_DEMO !== "0") {
    await runProducerDemo(createRedis({ url: rest.url, token }), log);
  }
  if (process.env.NIMBUSQ_EXIT_AFTER_DEMO === "1") {
    await stop();
    return;
  }
  log("serving; press Ctrl-C to stop");
}

main().catch((error: unknown) => {
  console.error(`[nimbusq] failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
