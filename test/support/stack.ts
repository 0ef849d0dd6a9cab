/**
 * What core tests need: an `@upstash/redis` client through a REST server, a direct ioredis
 * connection for BullMQ (the interop peer) and for looking at Redis without trusting nimbusq, and a
 * fresh key prefix per test so tests never see each other's keys.
 *
 * Three transports (NQ_TRANSPORT, set per project in vitest.config.ts): "rest" (default: the REST
 * server in front of the run's redis-server), "tcp" (a TcpRedis to that redis-server) and "cluster"
 * (a TcpRedis in cluster mode to the run's 3-master cluster, test/support/cluster-setup.ts; every
 * prefix is then hash-tagged so a queue's keys share one slot, and the direct connections are ioredis
 * Cluster clients).
 */

import type { Redis } from "@upstash/redis";
import type { ConnectionOptions } from "bullmq";
import { Cluster, Redis as IORedis } from "ioredis";
import { afterAll, beforeEach, inject, vi } from "vitest";
import { createRedis } from "../../core/redis/client.ts";
import type { TcpRedis } from "../../core/redis/tcp-redis.ts";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import type { Fault } from "../../infra/rest-server/faults.ts";
import { keySlot } from "../../infra/rest-server/key-slot.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { startFaultCluster } from "./fault-cluster.ts";
import { startFaultProxy } from "./fault-proxy.ts";

export type Transport = "rest" | "tcp" | "cluster";

/** The transport of this project's run (NQ_TRANSPORT). */
export function transport(): Transport {
  const named = process.env.NQ_TRANSPORT;
  return named === "tcp" || named === "cluster" ? named : "rest";
}

/**
 * A second prefix for tests that link two prefixes: on the cluster one with `prefix`'s hash tag (one
 * slot for both, as a cluster wants), elsewhere an unrelated one (so no code may match by prefix start).
 */
export function otherPrefix(prefix: string): string {
  return transport() === "cluster" ? `${prefix}-o` : uniquePrefix("o");
}

/** Whether core talks through a REST server here (billing and declared-key checks live there). */
export function overRest(): boolean {
  return transport() === "rest";
}

let counter = 0;

/** A prefix no other test uses, e.g. `t-4f2a-3`; on the cluster hash-tagged, e.g. `{t-4f2a-3}`. */
export function uniquePrefix(label = "t"): string {
  counter += 1;
  const prefix = `${label}-${process.pid.toString(36)}-${Date.now().toString(36)}-${counter}`;
  return transport() === "cluster" ? `{${prefix}}` : prefix;
}

/** A master of the cluster run and the first slot it serves (the project's global setup). */
export interface ClusterNode {
  host: string;
  port: number;
  firstSlot: number;
}

function clusterNodes(): ClusterNode[] {
  return inject("clusterNodes");
}

/** The redis-server that holds `key`'s slot (on the cluster) or the run's redis-server. */
export function serverOf(key: string): { host: string; port: number } {
  if (transport() !== "cluster") return { host: inject("redisHost"), port: inject("redisPort") };
  const slot = keySlot(key);
  const nodes = clusterNodes();
  const node = nodes.findLast((candidate) => candidate.firstSlot <= slot) ?? nodes[0];
  if (!node) throw new Error("the cluster run has no nodes");
  return { host: node.host, port: node.port };
}

/** The shared client for the file's transport (not closed: callers close it or leave it to the file). */
function transportClient(): TcpRedis {
  if (transport() === "cluster") {
    const [seed] = clusterNodes();
    if (!seed) throw new Error("the cluster run has no nodes");
    return createRedis({ url: `redis://${seed.host}:${seed.port}`, cluster: true }) as TcpRedis;
  }
  return createRedis({ url: `redis://${inject("redisHost")}:${inject("redisPort")}` }) as TcpRedis;
}

let tcp: TcpRedis | undefined;

/**
 * The shared REST server of the test run (global setup); or, in the runs over TCP (NQ_TRANSPORT=tcp
 * or cluster: vitest.config.ts's "over-tcp" and "over-cluster" projects), one TCP client of the
 * run's redis-server or cluster for the file — the same suites then run with no REST server between
 * (issue 27). Typed as the REST client: the files that run over TCP use only what core takes of it.
 */
export function sharedRedis(): Redis {
  if (!overRest()) {
    if (!tcp) {
      const client = transportClient();
      tcp = client;
      afterAll(() => client.close());
    }
    return tcp as unknown as Redis;
  }
  return createRedis({ url: inject("restUrl"), token: inject("restToken") });
}

/**
 * A direct connection to the run's redis-server, as BullMQ wants it; on the cluster an ioredis
 * Cluster, typed as a plain connection: every keyed command routes by its key's slot, and the helpers
 * here that are not keyed (keysUnder) walk every master.
 */
export function sharedConnection(): IORedis {
  if (transport() === "cluster") {
    const cluster = new Cluster(
      clusterNodes().map(({ host, port }) => ({ host, port })),
      { redisOptions: { maxRetriesPerRequest: null } },
    );
    return cluster as unknown as IORedis;
  }
  return new IORedis({ host: inject("redisHost"), port: inject("redisPort"), maxRetriesPerRequest: null });
}

/** A direct connection to the shared redis-server for one test file, closed after its tests. */
export function directConnectionForFile(): IORedis {
  const connection = sharedConnection();
  afterAll(() => connection.disconnect());
  return connection;
}

const bullClusters: IORedis[] = [];
if (transport() === "cluster") {
  afterAll(() => {
    for (const cluster of bullClusters.splice(0)) cluster.disconnect();
  });
}

/**
 * A `connection` for a BullMQ object: options (BullMQ opens and closes its own connections), or on
 * the cluster an ioredis Cluster of its own (BullMQ takes a Cluster with a hash-tagged prefix; the
 * file closes it after its tests, as BullMQ leaves a connection it was given open).
 */
export function bullConnection(): ConnectionOptions {
  if (transport() !== "cluster") return { ...sharedConnectionOptions(), maxRetriesPerRequest: null };
  const cluster = sharedConnection();
  bullClusters.push(cluster);
  return cluster;
}

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

/** The masters of a Cluster connection, or the connection itself. */
async function nodesOf(direct: IORedis): Promise<IORedis[]> {
  const connection: unknown = direct;
  if (!(connection instanceof Cluster)) return [direct];
  // Before the slots are loaded a Cluster knows no master: a scan of none would find nothing.
  if (connection.status !== "ready") await new Promise((resolve) => connection.once("ready", resolve));
  const masters = connection.nodes("master") as unknown as IORedis[];
  if (masters.length === 0) throw new Error("keysUnder: the cluster client knows no master");
  return masters;
}

/**
 * Every key under a prefix, sorted (SCAN, not KEYS, so a big shared server is not blocked); on the
 * cluster every master is scanned.
 */
export async function keysUnder(direct: IORedis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of await nodesOf(direct)) {
    let cursor = "0";
    do {
      const [next, batch] = await node.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== "0");
  }
  return keys.sort();
}

/**
 * A private redis-server and REST server: for counting billed commands or injecting faults. Over TCP
 * `redis` talks to the private redis-server through a fault proxy (test/support/fault-proxy.ts), with
 * no REST server between, and `direct` straight to it. On the cluster both are cluster clients of a
 * private 3-master cluster reached through fault proxies (fault-cluster.ts), and the private
 * redis-server and REST server only stand idle for the REST-only checks, which it skips (overRest()).
 */
export interface PrivateStack {
  redisServer: RedisServer;
  rest: RestServer;
  redis: Redis;
  direct: IORedis;
  /** A `connection` for a BullMQ object on the data's server(s), closed by stop(). */
  bullConnection(): ConnectionOptions;
  /** Loses `redis`'s requests or answers: the REST server's faults, or the same from the proxies. */
  setFault(fault: Fault | null): void;
  /** Faults the TCP fault proxies injected so far (undefined over REST, whose server does not count). */
  faultsFired(): number | undefined;
  /** The redis-server holding `key` (its slot's master on the cluster). */
  serverOf(key: string): { host: string; port: number };
  stop(): Promise<void>;
}

export async function startPrivateStack(): Promise<PrivateStack> {
  const redisServer = await startRedisServer();
  const started: (() => Promise<unknown>)[] = [() => redisServer.stop()];
  try {
    return await privateStackOn(redisServer, started);
  } catch (error) {
    // A part that failed to start (a cluster not formed in time on a busy machine) leaves none running.
    for (const stop of started.reverse()) await stop().catch(() => {});
    throw error;
  }
}

async function privateStackOn(
  redisServer: RedisServer,
  started: (() => Promise<unknown>)[],
): Promise<PrivateStack> {
  const rest = await startRestServer({
    redis: { host: redisServer.host, port: redisServer.port },
    token: "private",
    redis62: true,
  });
  started.push(() => rest.close());
  const mode = transport();
  const own = { host: redisServer.host, port: redisServer.port };
  const proxy = mode === "tcp" ? await startFaultProxy(own) : undefined;
  if (proxy) started.push(() => proxy.cut());
  const cluster = mode === "cluster" ? await startFaultCluster() : undefined;
  const clusterClient = (): IORedis =>
    new Cluster(cluster?.seeds ?? [], { redisOptions: { maxRetriesPerRequest: null } }) as unknown as IORedis;
  const direct = cluster ? clusterClient() : new IORedis({ ...own, maxRetriesPerRequest: null });
  const seed = cluster?.seeds[0];
  const tcpClient = seed
    ? (createRedis({ url: `redis://${seed.host}:${seed.port}`, cluster: true }) as TcpRedis)
    : proxy
      ? (createRedis({ url: proxy.url }) as TcpRedis)
      : undefined;
  const clusters: IORedis[] = [];
  return {
    redisServer,
    rest,
    redis: (tcpClient as unknown as Redis | undefined) ?? createRedis({ url: rest.url, token: rest.token }),
    direct,
    bullConnection: () => {
      if (!cluster) return { ...own, maxRetriesPerRequest: null };
      const connection = clusterClient();
      clusters.push(connection);
      return connection;
    },
    setFault: (fault) => {
      rest.setFault(fault);
      proxy?.setFault(fault);
      cluster?.setFault(fault);
    },
    faultsFired: () => proxy?.fired ?? cluster?.fired(),
    serverOf: (key) => cluster?.serverOf(key) ?? own,
    stop: async () => {
      for (const connection of clusters.splice(0)) connection.disconnect();
      await tcpClient?.close();
      direct.disconnect();
      await proxy?.cut();
      await cluster?.stop();
      await rest.close();
      await redisServer.stop();
    },
  };
}
