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
import { setTimeout as sleep } from "node:timers/promises";
import { ADMIN_PREFIX, handleAdmin } from "./admin-routes.ts";
import { type RestStats, UsageMeter } from "./billing.ts";
import { rejectionOf } from "./command-policy.ts";
import { BadRequest, type Endpoint, parseCommands } from "./command-request.ts";
import { ConnectionPool } from "./connection-pool.ts";
import { runPipeline, runTransaction } from "./execute.ts";
import { type Fault, FaultInjector } from "./faults.ts";
import { isAuthorized, isJsonContentType, readBody, sendError, sendJson } from "./http-io.ts";
import { KeyLocking } from "./key-locking.ts";
import { parseCommandTable } from "./lua-key-check.ts";
import { type Encoding, entryJson, errorJson, resultJson } from "./reply-json.ts";

export type { RestStats } from "./billing.ts";
export type { Fault } from "./faults.ts";

export interface RestServerOptions {
  redis: { host: string; port: number };
  token: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 10 MiB, Upstash's smallest limit; larger bodies get 400 "ERR max request size exceeded". */
  maxBodyBytes?: number;
  /** Default true: measure the redis.call()s scripts run, which serialises script-bearing requests. */
  countScriptCalls?: boolean;
  /**
   * Default true: scripts flagged `#!lua flags=allow-key-locking` may only touch keys in KEYS, as on
   * Upstash (checked by a prelude added to the script). False: the flag is still stripped, unchecked.
   */
  declaredKeys?: boolean;
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
const SERVICE_UNAVAILABLE_PAGE =
  "<html><head><title>503 Service Temporarily Unavailable</title></head>" +
  "<body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>\n";

interface Context {
  readonly token: string;
  readonly maxBodyBytes: number;
  readonly pool: ConnectionPool;
  readonly meter: UsageMeter;
  readonly faults: FaultInjector;
  readonly scripts: KeyLocking;
  nextSyncToken(): string;
}

/** A JSON answer: status and body. */
interface Answer {
  status: number;
  json: string;
}

/** What to do with a command request: apply a fault, answer, or both (`drop-after` runs, then drops). */
interface Outcome {
  fault: Fault | null;
  answer?: Answer;
}

async function answerCommands(
  context: Context,
  endpoint: Endpoint,
  body: Buffer,
  encoding: Encoding,
): Promise<Outcome> {
  const commands = parseCommands(body, endpoint);
  const fault = context.faults.take(commands.map((command) => command.name));
  if (fault?.kind === "delay") await sleep(fault.delayMs);
  if (fault && fault.kind !== "delay" && fault.kind !== "drop-after") return { fault };
  const rejections = commands.map(rejectionOf);
  let answer: Answer;
  if (endpoint === "multi-exec") {
    const refused = rejections.find((rejection) => rejection !== null);
    if (refused) return { fault, answer: { status: 400, json: errorJson(refused) } };
    const plan = context.scripts.plan(commands);
    const outcome = await context.meter.run(commands, ["multi", "exec"], () =>
      runTransaction(context.pool, plan.commands),
    );
    if (outcome.kind === "discarded") {
      answer = { status: 400, json: errorJson(outcome.error) };
    } else {
      const settled = await context.scripts.settle(plan, outcome.replies, null);
      context.meter.countKeyLocking(settled.calls, settled.violations);
      answer = {
        status: 200,
        json: `[${settled.replies.map((reply) => entryJson(reply, encoding)).join(",")}]`,
      };
    }
  } else {
    const allowed = commands.filter((_, index) => rejections[index] === null);
    const plan = context.scripts.plan(allowed);
    const retried: string[] = [];
    const settled = await context.meter.run(allowed, retried, async () => {
      const sent = await runPipeline(context.pool, plan.commands);
      return await context.scripts.settle(plan, sent, (command) => {
        retried.push(command.name);
        return context.pool.use((connection) => connection.call(...command.args));
      });
    });
    context.meter.countKeyLocking(settled.calls, settled.violations);
    const replies = settled.replies;
    let next = 0;
    const entries = rejections.map((rejection) => {
      if (rejection !== null) return { kind: "error", text: rejection } as const;
      const reply = replies[next++];
      if (!reply) throw new Error("redis sent fewer replies than commands");
      return reply;
    });
    const [first] = entries;
    if (endpoint === "pipeline") {
      answer = { status: 200, json: `[${entries.map((entry) => entryJson(entry, encoding)).join(",")}]` };
    } else if (!first) {
      throw new Error("a single-command request produced no reply");
    } else if (first.kind === "error") {
      answer = { status: 400, json: errorJson(first.text) };
    } else {
      answer = { status: 200, json: `{"result":${resultJson(first, encoding)}}` };
    }
  }
  return { fault, answer };
}

async function handleCommands(
  context: Context,
  endpoint: Endpoint,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  context.meter.countRequest();
  const body = await readBody(request, context.maxBodyBytes);
  if (body.kind === "too-large") return sendError(response, 400, "ERR max request size exceeded");
  if (!isJsonContentType(request.headers["content-type"])) {
    return sendError(response, 400, "ERR content-type must be application/json");
  }
  const encodingHeader = request.headers["upstash-encoding"];
  const encoding: Encoding = String(encodingHeader ?? "").toLowerCase() === "base64" ? "base64" : "utf8";
  let result: Outcome;
  try {
    result = await answerCommands(context, endpoint, body.body, encoding);
  } catch (error) {
    if (error instanceof BadRequest) return sendError(response, 400, error.message);
    return sendError(response, 500, `ERR redis request failed: ${(error as Error).message}`);
  }
  const { fault, answer } = result;
  if (fault?.kind === "fail-before" || fault?.kind === "drop-after") {
    request.socket.destroy();
  } else if (fault?.kind === "status-500") {
    sendError(response, 500, "ERR injected fault: internal server error");
  } else if (fault?.kind === "status-503") {
    response.writeHead(503, { "content-type": "text/html" });
    response.end(SERVICE_UNAVAILABLE_PAGE);
  } else if (answer) {
    const headers: Record<string, string> =
      answer.status === 200 ? { "upstash-sync-token": context.nextSyncToken() } : {};
    sendJson(response, answer.status, answer.json, headers);
  }
}

async function route(context: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
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
  const pool = new ConnectionPool(options.redis.host, options.redis.port, POOL_SIZE);
  const meter = new UsageMeter(options.redis, options.countScriptCalls ?? true);
  const faults = new FaultInjector();
  let scripts: KeyLocking;
  try {
    await pool.use((connection) => connection.call("PING"));
    // Key positions are read once, here: a COMMAND sent later could fall into another request's
    // billing window and be billed to its script.
    const table =
      (options.declaredKeys ?? true) ? await pool.use((connection) => connection.call("COMMAND")) : null;
    scripts = new KeyLocking(table ? parseCommandTable(table) : null);
  } catch (error) {
    pool.close();
    throw error;
  }
  let syncCounter = 0;
  const bootId = Date.now().toString(36);
  const context: Context = {
    token: options.token,
    maxBodyBytes: options.maxBodyBytes ?? 10 * 1024 * 1024,
    pool,
    meter,
    faults,
    scripts,
    nextSyncToken: () => `${bootId}-${++syncCounter}`,
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
    pool.close();
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
      pool.close();
      meter.close();
      await closed;
    },
  };
}
