/**
 * A local stand-in for Upstash Redis's REST API, in front of a real redis-server, so the unmodified
 * `@upstash/redis` client behaves against it as it does against Upstash: same endpoints, base64
 * encoding, error shapes and status codes, the same refusals, plus billing counters and fault
 * injection for tests.
 *
 * @example
 * const rest = await startRestServer({ redis: { host: "127.0.0.1", port: 6379 }, token: "dev-token" });
 * const redis = new Redis({ url: rest.url, token: rest.token });
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ADMIN_PREFIX, handleAdmin } from "./admin-routes.ts";
import { type RestStats, UsageMeter } from "./billing.ts";
import { ClusterBackend } from "./cluster-backend.ts";
import type { Endpoint } from "./command-request.ts";
import { type Context, handleCommands } from "./command-routes.ts";
import { type Backend, SingleNodeBackend } from "./execute.ts";
import { type Fault, FaultInjector } from "./faults.ts";
import { isAuthorized, readBody, sendError, sendJson } from "./http-io.ts";
import { parseCommandTable } from "./lua-key-check.ts";
import { ScriptRewrites } from "./script-rewrites.ts";

export type { RestStats } from "./billing.ts";
export type { Fault } from "./faults.ts";

export interface RestServerOptions {
  /** The redis-server; in cluster mode any node of the cluster. */
  redis: { host: string; port: number };
  /**
   * Default false. True: `redis` is a node of a Redis Cluster; commands and scripts are routed to the
   * master owning their first key's slot (`cluster-backend.ts`), and billing sums every master's counts.
   */
  cluster?: boolean;
  token: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default "127.0.0.1". */
  host?: string;
  /**
   * Default `UPSTASH_MAX_REQUEST_BYTES` (10,000,000: Upstash's "10 MB", its smallest limit); a larger
   * body gets 400 `{"error":"ERR max request size exceeded"}`.
   */
  maxBodyBytes?: number;
  /** Default true: measure the redis.call()s scripts run, which serialises script-bearing requests. */
  countScriptCalls?: boolean;
  /**
   * Default true: scripts flagged `#!lua flags=allow-key-locking` may only touch keys in KEYS, as on
   * Upstash (checked by a prelude added to the script). False: the flag is still stripped, unchecked.
   */
  declaredKeys?: boolean;
  /**
   * Default true: answer as Upstash does (it now promises Redis "up to 8.2"): commands it does not
   * serve over REST are refused (command-policy.ts), scripts may carry its `#!lua flags=…` shebang
   * (`allow-key-locking`, `no-writes`, both), and unknown script SHAs answer NOSCRIPT. Billing is the
   * same either way.
   */
  upstashMode?: boolean;
  /**
   * Default false: also refuse the Redis 7.0-only forms (plain and inside every script, see
   * `redis62.ts`) and any shebang but `#!lua flags=allow-key-locking` — what an Upstash database that
   * promised Redis 6.2 did. nimbusq's own tests run with it on: its scripts keep to forms every Upstash
   * database has.
   */
  redis62?: boolean;
  /** Default 0: the `Date` header of every answer is this far from the machine's clock (ms), for tests. */
  dateOffsetMs?: number;
}

export interface RestServer {
  /** `http://<host>:<port>`, ready for `new Redis({ url, token })`. */
  url: string;
  port: number;
  token: string;
  stats(): RestStats;
  resetStats(): void;
  setFault(fault: Fault | null): void;
  /** Closes client sockets and backend connections. */
  close(): Promise<void>;
}

const ENDPOINTS: Record<string, Endpoint> = {
  "/": "single",
  "/pipeline": "pipeline",
  "/multi-exec": "multi-exec",
};
const POOL_SIZE = 8;

/** Upstash's request limit on the free and pay-as-you-go plans, "10 MB", in bytes. */
export const UPSTASH_MAX_REQUEST_BYTES = 10_000_000;

async function route(context: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (context.dateOffsetMs !== 0)
    response.setHeader("date", new Date(Date.now() + context.dateOffsetMs).toUTCString());
  // Prefixed rather than resolved against a base, so "//pipeline" stays a path instead of becoming a host.
  const url = new URL(`http://localhost${request.url ?? "/"}`);
  const path = url.pathname;
  const endpoint = ENDPOINTS[path];
  if (path === "/" && (request.method === "GET" || request.method === "HEAD")) {
    await readBody(request, 0);
    return sendJson(response, 200, '{"result":"nimbusq rest-server is up"}');
  }
  if (!endpoint && !path.startsWith(ADMIN_PREFIX)) {
    await readBody(request, 0);
    return sendError(response, 404, `ERR unknown endpoint ${path}: use POST /, /pipeline or /multi-exec`);
  }
  if (!isAuthorized(request, url, context.token)) {
    await readBody(request, 0);
    return sendError(response, 401, "WRONGPASS invalid or missing auth token");
  }
  if (!endpoint) return handleAdmin(request, response, path, context);
  if (request.method !== "POST") {
    await readBody(request, 0);
    response.setHeader("allow", "POST");
    return sendError(response, 405, `ERR method ${request.method ?? "?"} not allowed on ${path}; use POST`);
  }
  await handleCommands(context, endpoint, request, response);
}

/** Starts the server once Redis answers PING, so a wrong address fails here rather than per request. */
export async function startRestServer(options: RestServerOptions): Promise<RestServer> {
  const backend: Backend = options.cluster
    ? await ClusterBackend.connect(options.redis, POOL_SIZE)
    : new SingleNodeBackend(options.redis, POOL_SIZE);
  const meter = new UsageMeter(() => backend.nodes(), options.countScriptCalls ?? true);
  const faults = new FaultInjector();
  const upstashMode = options.upstashMode ?? true;
  const redis62 = upstashMode && (options.redis62 ?? false);
  let scripts: ScriptRewrites;
  try {
    const ping = await backend.call({ name: "ping", args: ["PING"] });
    if (ping.kind === "error") throw new Error(`redis answered PING with ${ping.text}`);
    // Key positions are read once, here: a COMMAND sent later could fall into another request's
    // billing window and be billed to its script.
    const table =
      (options.declaredKeys ?? true) ? await backend.call({ name: "command", args: ["COMMAND"] }) : null;
    scripts = new ScriptRewrites({
      positions: table ? parseCommandTable(table) : null,
      redis62,
      slotShebang: options.cluster === true,
    });
  } catch (error) {
    backend.close();
    throw error;
  }
  let syncCounter = 0;
  const bootId = Date.now().toString(36);
  const context: Context = {
    token: options.token,
    maxBodyBytes: options.maxBodyBytes ?? UPSTASH_MAX_REQUEST_BYTES,
    upstashMode,
    redis62,
    backend,
    meter,
    faults,
    scripts,
    nextSyncToken: () => `${bootId}-${++syncCounter}`,
    dateOffsetMs: options.dateOffsetMs ?? 0,
  };

  const server = createServer((request, response) => {
    route(context, request, response).catch((error: unknown) => {
      sendError(
        response,
        500,
        `ERR internal error: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  });
  // Outlive the client's idle sockets, so a reused connection is never closed under a request: the
  // client would take that for a network error and retry, running the request twice.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;

  const host = options.host ?? "127.0.0.1";
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    backend.close();
    meter.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const urlHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    token: options.token,
    stats: () => meter.stats(),
    resetStats: () => meter.reset(),
    setFault: (fault) => faults.set(fault),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      backend.close();
      meter.close();
      await closed;
    },
  };
}
