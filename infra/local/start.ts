/**
 * `npm start`: the whole stack on one machine (see stack.ts), seeded with demo jobs, until Ctrl-C.
 *
 * Environment: REDIS_URL (use this redis-server), PORT (HTTP API and Bull Board, default 3000),
 * REST_PORT (Upstash-compatible REST API, default 8079), NIMBUSQ_API_TOKEN (default dev-token),
 * NIMBUSQ_TICK_MS (sweeper tick, default 10000), NIMBUSQ_DEMO=0 (no demo jobs),
 * NIMBUSQ_EXIT_AFTER_DEMO=1 (stop once the demo jobs are added and counted), NIMBUSQ_LOCAL_TRANSPORT=tcp
 * (the functions talk TCP straight to redis-server instead of through the REST server).
 *
 * A start that fails (redis-server not installed, a port taken, a bad variable) prints what to do, no
 * stack trace, and exits with code 1, after stopping whatever it had started.
 */
import { createRedis } from "../../core/index.ts";
import { runProducerDemo } from "../../examples/demo/producer-demo.ts";
import { RedisServerNotFoundError } from "../redis-server.ts";
import { PortInUseError, startLocalStack } from "./stack.ts";

function numberFromEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, got "${text}"`);
  return value;
}

async function main(): Promise<void> {
  const log = (line: string) => console.log(`[nimbusq] ${line}`);
  const stack = await startLocalStack({
    redisUrl: process.env.REDIS_URL || undefined,
    transport: process.env.NIMBUSQ_LOCAL_TRANSPORT === "tcp" ? "tcp" : "rest",
    httpPort: numberFromEnv("PORT", 3000),
    restPort: numberFromEnv("REST_PORT", 8079),
    apiToken: process.env.NIMBUSQ_API_TOKEN || undefined,
    tickMs: numberFromEnv("NIMBUSQ_TICK_MS", 10_000),
  });
  log(`redis-server at ${stack.redis.host}:${stack.redis.port}`);
  log(`HTTP API at ${stack.apiUrl} (token ${stack.apiToken}), OpenAPI at ${stack.apiUrl}/openapi.json`);
  log(`Bull Board at ${stack.apiUrl}/admin/queues`);
  log(`Upstash-compatible REST API at ${stack.restUrl}`);
  log(`  export UPSTASH_REDIS_REST_URL=${stack.restUrl} UPSTASH_REDIS_REST_TOKEN=${stack.restToken}`);
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await stack.stop();
    log("stopped");
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  if (process.env.NIMBUSQ_DEMO !== "0") {
    await runProducerDemo(createRedis({ url: stack.restUrl, token: stack.restToken }), log);
    await stack.sweepNow();
  }
  if (process.env.NIMBUSQ_EXIT_AFTER_DEMO === "1") return void (await stop(0));
  log(
    `try: curl -s -X POST ${stack.apiUrl}/queues/email/jobs -H 'authorization: Bearer ${stack.apiToken}' -H 'content-type: application/json' -d '{"name":"welcome","data":{"to":"you@example.com"}}'`,
  );
  log("running; press Ctrl-C to stop");
}

/** What to tell the user about a failed start: the cause and the fix, one line each. */
function startFailureAdvice(error: unknown): string[] {
  if (error instanceof RedisServerNotFoundError) {
    return [
      `${error.message}.`,
      "Install it (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis),",
      "or use a running one: REDIS_URL=redis://127.0.0.1:6379 npm start",
    ];
  }
  if (error instanceof PortInUseError) {
    const variable = error.server === "http" ? "PORT" : "REST_PORT";
    return [
      `${error.message}.`,
      `Set ${variable} to a free port (${variable}=0 picks any): ${variable}=0 npm start`,
    ];
  }
  return [error instanceof Error ? error.message : String(error)];
}

main().catch((error: unknown) => {
  const [first, ...rest] = startFailureAdvice(error);
  console.error(`[nimbusq] failed to start: ${first}`);
  for (const line of rest) console.error(`[nimbusq]   ${line}`);
  process.exit(1);
});
