/**
 * Redis over TCP (issue 27): ElastiCache, MemoryDB, a self-hosted Redis or Redis Cluster, or Upstash's
 * own TCP endpoint, through `ioredis` (BullMQ's client: slot routing, MOVED/ASK, reconnects, TLS). It
 * offers the calls core makes of an `@upstash/redis` client (UpstashRedisLike), so every class and
 * function takes it where it takes the REST client, with the same retries and errors (redis-port.ts).
 *
 * `ioredis` is imported at the first command, never at import: REST-only code and bundles do not load
 * it. One connection (or one cluster client) per TcpRedis, opened on the first command and reused by
 * every call after it — a Lambda container's warm invocations share it.
 *
 * Scripts: nimbusq's hot-path scripts open with Upstash's `#!lua flags=allow-key-locking`, a flag
 * Redis 7 does not know and refuses. For any server but Upstash the flag is taken out of the source
 * (keeping `no-writes`), and the script runs under the SHA of that adapted source: EVALSHA with the
 * REST form's SHA answers NOSCRIPT locally until the adapted source has been sent once (core's EVAL
 * fallback), then goes out with the adapted SHA. A server that lost its scripts (a flush, a failover,
 * a new cluster node) answers NOSCRIPT itself, and the same fallback loads them again.
 */
import type { UpstashRedisLike } from "./redis-port.ts";

export interface TcpRedisOptions {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://…` for TLS. */
  url: string;
  /** A Redis Cluster (ElastiCache cluster mode, MemoryDB, a self-hosted cluster): `url` is one node. */
  cluster?: boolean;
  /**
   * The script form the server takes: "upstash" keeps `allow-key-locking` (Upstash over TCP), "redis"
   * takes it out. Default: "upstash" for hosts under upstash.io, else "redis".
   */
  scriptFlags?: "upstash" | "redis";
  /** Connect timeout (ms), default 10,000. */
  connectTimeoutMs?: number;
  /** Per-command timeout (ms), default 10,000; 0 for none. */
  commandTimeoutMs?: number;
}

const ioredisModule = "ioredis";

/** The ioredis client or cluster, as far as this module uses it. */
interface IoClient {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  /** A cluster's nodes (ioredis Cluster only). */
  nodes?(role: "master"): IoClient[];
}

/** What this module takes from `ioredis` (an optional peer dependency: no types are needed from it). */
interface IoRedisModule {
  Redis: new (options: Record<string, unknown>) => IoClient;
  Cluster: new (nodes: { host: string; port: number }[], options: Record<string, unknown>) => IoClient;
}

/** The script form a URL's server takes when the options do not say. */
export function scriptFlagsFor(url: URL): "upstash" | "redis" {
  return url.hostname === "upstash.io" || url.hostname.endsWith(".upstash.io") ? "upstash" : "redis";
}

/**
 * A script's source for a server that does not know Upstash's flag: `allow-key-locking` taken out of
 * the shebang, the shebang dropped when no flag is left (a shebang without flags would change how
 * Redis 7 runs the script). Other sources come back as they are.
 */
export function withoutUpstashFlags(source: string): string {
  const shebang = /^#!lua(?: flags=([^\n]*))?\n/.exec(source);
  if (!shebang) return source;
  const flags = (shebang[1] ?? "").split(",").filter((flag) => flag !== "" && flag !== "allow-key-locking");
  const rest = source.slice(shebang[0].length);
  return flags.length > 0 ? `#!lua flags=${flags.join(",")}\n${rest}` : rest;
}

async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A NOSCRIPT answered without a round trip: the adapted source has not been sent yet. */
class NotLoadedHere extends Error {
  override name = "NoScriptError";
  constructor() {
    super("NOSCRIPT the adapted script is not loaded on this connection yet");
  }
}

export class TcpRedis implements UpstashRedisLike {
  /** Where it connects, without credentials: core's error messages name the host from it. */
  readonly client: { baseUrl: string };
  readonly scriptFlags: "upstash" | "redis";
  private readonly url: URL;
  private connecting: Promise<IoClient> | undefined;
  /** The REST form's SHA → the adapted source's SHA, once that source went out. */
  private readonly adapted = new Map<string, string>();

  constructor(private readonly options: TcpRedisOptions) {
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw new TypeError("createRedis: url is not a URL (expected redis://host:port or rediss://host:port)");
    }
    if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
      throw new TypeError(`createRedis: a TCP url starts with redis:// or rediss://, not ${url.protocol}//`);
    }
    this.url = url;
    this.client = { baseUrl: `${url.protocol}//${url.host}` };
    this.scriptFlags = options.scriptFlags ?? scriptFlagsFor(url);
  }

  private connection(): Promise<IoClient> {
    this.connecting ??= this.open();
    return this.connecting;
  }

  private async open(): Promise<IoClient> {
    // A specifier bundlers do not follow: REST-only and edge bundles never carry ioredis; Node
    // resolves it at the first command (a TCP deployment ships it beside its bundle).
    const loaded = (await import(ioredisModule)) as Partial<IoRedisModule> & { default?: IoRedisModule };
    // ESM sees named exports of the package; a bundled CommonJS copy (infra/build) only its default.
    const { Redis, Cluster } = (loaded.Redis ? loaded : loaded.default) as IoRedisModule;
    const { url, options } = this;
    const tls = url.protocol === "rediss:" ? {} : undefined;
    const common = {
      connectTimeout: options.connectTimeoutMs ?? 10_000,
      commandTimeout: options.commandTimeoutMs === 0 ? undefined : (options.commandTimeoutMs ?? 10_000),
      // Core retries within its window (retry.ts) with replay-safe scripts: a command sent while the
      // connection is down fails after one reconnect attempt and core sends it again; one already
      // sent and unanswered when a connection drops is resent by ioredis after it reconnects
      // (autoResendUnfulfilledCommands) — safe, since every script call is replay-guarded.
      maxRetriesPerRequest: 1,
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      ...(tls ? { tls } : {}),
    };
    const port = Number(url.port || 6379);
    const client = options.cluster
      ? new Cluster([{ host: url.hostname, port }], {
          redisOptions: common,
          // ElastiCache and MemoryDB with TLS: connect by the names their certificates carry.
          ...(tls
            ? { dnsLookup: (address: string, done: (e: null, a: string) => void) => done(null, address) }
            : {}),
        })
      : new Redis({ host: url.hostname, port, db: Number(url.pathname.slice(1) || 0), ...common });
    // A dropped connection (a reset, a Redis restart) fails the commands it held, and core retries
    // them: the client's own "error" event tells nothing more. Without a listener ioredis prints each
    // one to stderr ("[ioredis] Unhandled error event"), a log line per drop and per reconnect attempt
    // while a server is away, in every container.
    client.on("error", () => {});
    return client;
  }

  private async run(command: string, args: (string | number)[]): Promise<unknown> {
    return (await this.connection()).call(command, ...args);
  }

  async evalsha<TArgs extends unknown[], TData = unknown>(
    sha1: string,
    keys: string[],
    args: TArgs,
  ): Promise<TData> {
    let sha = sha1;
    if (this.scriptFlags === "redis") {
      const known = this.adapted.get(sha1);
      if (!known) throw new NotLoadedHere();
      sha = known;
    }
    return (await this.run("EVALSHA", [sha, keys.length, ...keys, ...(args as string[])])) as TData;
  }

  async eval<TArgs extends unknown[], TData = unknown>(
    script: string,
    keys: string[],
    args: TArgs,
  ): Promise<TData> {
    let source = script;
    if (this.scriptFlags === "redis") {
      source = withoutUpstashFlags(script);
      this.adapted.set(await sha1Hex(script), await sha1Hex(source));
    }
    return (await this.run("EVAL", [source, keys.length, ...keys, ...(args as string[])])) as TData;
  }

  hgetall(key: string): Promise<unknown> {
    return this.run("HGETALL", [key]);
  }

  xrange(key: string, start: string, end: string, count?: number): Promise<unknown> {
    return this.run("XRANGE", count === undefined ? [key, start, end] : [key, start, end, "COUNT", count]);
  }

  xrevrange(key: string, end: string, start: string, count?: number): Promise<unknown> {
    return this.run("XREVRANGE", count === undefined ? [key, end, start] : [key, end, start, "COUNT", count]);
  }

  zrange(key: string, min: number, max: number, options?: { withScores?: boolean }): Promise<unknown> {
    return this.run("ZRANGE", options?.withScores ? [key, min, max, "WITHSCORES"] : [key, min, max]);
  }

  /**
   * SCAN as `@upstash/redis` answers it, `[cursor, keys]` (the operator CLI's key walk). On a cluster
   * the walk goes through each master in turn; the cursor then reads `<master>-<cursor>`.
   */
  async scan(
    cursor: string | number,
    options: { match?: string; count?: number } = {},
  ): Promise<[string, string[]]> {
    const client = await this.connection();
    const extra = [
      ...(options.match ? ["MATCH", options.match] : []),
      ...(options.count ? ["COUNT", options.count] : []),
    ];
    if (!this.options.cluster) {
      const [next, keys] = (await client.call("SCAN", String(cursor), ...extra)) as [string, string[]];
      return [String(next), keys];
    }
    const masters = client.nodes?.("master") ?? [];
    const [index = "0", at = "0"] = String(cursor) === "0" ? [] : String(cursor).split("-");
    const node = masters[Number(index)];
    if (!node) throw new TypeError(`scan: cursor ${cursor} is not one this client gave`);
    const [next, keys] = (await node.call("SCAN", at, ...extra)) as [string, string[]];
    if (String(next) !== "0") return [`${index}-${next}`, keys];
    const following = Number(index) + 1;
    return [following < masters.length ? `${following}-0` : "0", keys];
  }

  /** Closes the connection (a later command opens a new one). */
  async close(): Promise<void> {
    const pending = this.connecting;
    this.connecting = undefined;
    if (!pending) return;
    const client = await pending.catch(() => undefined);
    if (!client) return;
    await client.quit().catch(() => client.disconnect());
  }
}
