/**
 * Runs the local Upstash-compatible REST server from the command line.
 *
 * @example
 * npx tsx infra/rest-server/cli.ts --redis-url redis://127.0.0.1:6379 --port 8079 --token dev-token
 *
 * Without a Redis URL it starts its own disposable redis-server and stops it on exit.
 */
import { parseArgs } from "node:util";
import { type RedisServer, startRedisServer } from "../redis-server.ts";
import { startRestServer, UPSTASH_MAX_REQUEST_BYTES } from "./server.ts";

const USAGE = `Usage: rest-server [--redis-url redis://host:port] [--port 8079] [--host 127.0.0.1] [--token TOKEN]
                   [--max-body-bytes N] [--no-script-calls] [--no-declared-keys] [--no-upstash-mode] [--redis62]

  --redis-url        redis-server to front (env REDIS_URL); without one a disposable redis-server is started
  --port             port to listen on (env PORT; default 8079, 0 = any free port)
  --host             interface to listen on (default 127.0.0.1)
  --token            bearer token clients must send (env UPSTASH_REDIS_REST_TOKEN; default "dev-token",
                     which is only allowed on a loopback host)
  --max-body-bytes   largest accepted request body (default 10000000, Upstash's "10 MB")
  --no-script-calls  do not measure redis.call()s inside scripts (no serialisation of script requests)
  --no-declared-keys let scripts flagged allow-key-locking touch keys missing from KEYS (the flag is
                     still stripped before Redis sees the script)
  --no-upstash-mode  answer as a plain Redis would (by default as Upstash, which promises Redis up to
                     8.2: its shebang flags accepted, commands it does not serve over REST refused)
  --redis62          also refuse Redis 7.0-only forms, plain and inside scripts, and shebangs other
                     than allow-key-locking (what Upstash promised before)
  --cluster          --redis-url names a node of a Redis Cluster: route each command by its keys
`;

interface CliOptions {
  redis: { host: string; port: number } | null;
  port: number;
  host: string;
  token: string;
  maxBodyBytes: number;
  countScriptCalls: boolean;
  declaredKeys: boolean;
  upstashMode: boolean;
  redis62: boolean;
  cluster: boolean;
}

class UsageError extends Error {
  override readonly name = "UsageError";
}

function parseRedisUrl(text: string): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--redis-url ${JSON.stringify(text)} is not a URL like redis://127.0.0.1:6379`);
  }
  if (url.protocol !== "redis:") {
    throw new UsageError(`--redis-url must start with redis:// (got ${url.protocol})`);
  }
  // The backend connection speaks plain RESP without AUTH or SELECT; refuse rather than ignore them.
  if (url.username || url.password) throw new UsageError("--redis-url with credentials is not supported");
  if (url.pathname !== "" && url.pathname !== "/" && url.pathname !== "/0") {
    throw new UsageError("--redis-url must use database 0 (Upstash has a single database)");
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? parseInteger(url.port, "port") : 6379,
  };
}

function parseInteger(text: string, what: string, max = 65_535): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value > max) {
    throw new UsageError(`${what} must be an integer from 0 to ${max} (got ${JSON.stringify(text)})`);
  }
  return value;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

function parseCliOptions(argv: string[], env: NodeJS.ProcessEnv): CliOptions | "help" {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return "help";
  // An empty environment variable means unset, as shells make it easy to export one by accident.
  const redisUrl = values["redis-url"] ?? (env.REDIS_URL || undefined);
  const host = values.host ?? "127.0.0.1";
  const token = values.token ?? (env.UPSTASH_REDIS_REST_TOKEN || "dev-token");
  if (token === "") throw new UsageError("--token must not be empty");
  if (token === "dev-token" && !isLoopback(host)) {
    throw new UsageError(
      `listening on ${host} needs an explicit --token (the default "dev-token" is loopback-only)`,
    );
  }
  const maxBody = values["max-body-bytes"];
  if (values.cluster && !redisUrl)
    throw new UsageError("--cluster needs --redis-url (any node of the cluster)");
  return {
    redis: redisUrl ? parseRedisUrl(redisUrl) : null,
    port: parseInteger(values.port ?? (env.PORT || "8079"), "--port"),
    host,
    token,
    maxBodyBytes:
      maxBody === undefined ? UPSTASH_MAX_REQUEST_BYTES : parseInteger(maxBody, "--max-body-bytes", 2 ** 31),
    countScriptCalls: !values["no-script-calls"],
    declaredKeys: !values["no-declared-keys"],
    upstashMode: !values["no-upstash-mode"],
    redis62: values.redis62 === true,
    cluster: values.cluster === true,
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      "redis-url": { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      "max-body-bytes": { type: "string" },
      "no-script-calls": { type: "boolean" },
      "no-declared-keys": { type: "boolean" },
      "no-upstash-mode": { type: "boolean" },
      redis62: { type: "boolean" },
      cluster: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

async function main(): Promise<number> {
  let options: CliOptions | "help";
  try {
    options = parseCliOptions(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`rest-server: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  let redis = options.redis;
  let ownRedis: RedisServer | null = null;
  if (!redis) {
    ownRedis = await startRedisServer();
    redis = { host: ownRedis.host, port: ownRedis.port };
    process.stdout.write(`started redis-server at ${ownRedis.url}\n`);
  }
  const server = await startRestServer({ ...options, redis }).catch(async (error: unknown) => {
    await ownRedis?.stop();
    throw error;
  });
  process.stdout.write(
    `nimbusq rest-server listening on ${server.url} (redis ${redis.host}:${redis.port})\n` +
      `UPSTASH_REDIS_REST_URL=${server.url}\nUPSTASH_REDIS_REST_TOKEN=${server.token}\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  process.stdout.write(`received ${signal}, stopping\n`);
  await server.close();
  await ownRedis?.stop();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`rest-server: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
