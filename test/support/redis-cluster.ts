/**
 * A small local Redis Cluster for tests: `size` masters, no replicas, each a disposable redis-server
 * (infra/redis-server.ts: free loopback port, its own temp dir, which holds its nodes.conf) with an
 * explicit cluster bus port (the default, port + 10000, may lie beyond 65535). Slots are split evenly
 * by CLUSTER ADDSLOTS, the nodes meet, and the cluster is ready once every node says `cluster_state:ok`
 * and knows every other. `stop()` stops every server and removes every temp dir.
 */
import { spawnSync } from "node:child_process";
import { Redis as IORedis } from "ioredis";
import { freePort, type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { SLOT_COUNT } from "../../infra/rest-server/key-slot.ts";

export interface RedisCluster {
  /** The masters, in slot order: node i serves slots [i * 16384 / size, (i + 1) * 16384 / size). */
  nodes: RedisServer[];
  /** A direct (non-cluster) connection to each node, for looking at what each one holds. */
  connections: IORedis[];
  /** The node serving `slot`. */
  nodeOf(slot: number): number;
  stop(): Promise<void>;
}

/** Whether a redis-server binary can be run here (the cluster tests skip only when it cannot). */
export function redisServerInstalled(): boolean {
  const binary = process.env.REDIS_SERVER_BIN ?? "redis-server";
  return spawnSync(binary, ["--version"], { stdio: "ignore" }).status === 0;
}

async function waitUntilFormed(connections: IORedis[], deadline: number): Promise<void> {
  for (;;) {
    const infos = await Promise.all(
      connections.map((connection) => connection.call("CLUSTER", "INFO") as Promise<string>),
    );
    const formed = infos.every(
      (info) =>
        info.includes("cluster_state:ok") &&
        info.includes(`cluster_known_nodes:${connections.length}\r\n`) &&
        info.includes(`cluster_slots_ok:${SLOT_COUNT}\r\n`),
    );
    if (formed) return;
    if (Date.now() > deadline) throw new Error(`the test cluster did not form: ${infos.join(" | ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A node could not start: a bus port picked free was taken before it bound (another server's). */
class NodeStartError extends Error {}

/**
 * `announcePorts`: the port each master gives clients for itself (CLUSTER SLOTS, MOVED), e.g. a
 * proxy's in front of it (--cluster-announce-port); by default its own. A node that cannot bind its
 * bus port (picked free, then taken by a server another test file started) restarts the whole
 * cluster with new ports, up to three times.
 */
export async function startRedisCluster(
  size = 3,
  options: { announcePorts?: number[] } = {},
): Promise<RedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(size, options);
    } catch (error) {
      if (!(error instanceof NodeStartError) || attempt >= 3) throw error;
    }
  }
}

async function startOnce(size: number, options: { announcePorts?: number[] }): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  const busPorts: number[] = [];
  const connections: IORedis[] = [];
  const stop = async () => {
    for (const connection of connections.splice(0)) connection.disconnect();
    await Promise.all(nodes.splice(0).map((node) => node.stop()));
  };
  try {
    for (let i = 0; i < size; i++) busPorts.push(await freePort());
    // Started together: a new master holds back `cluster_state:ok` for 2 s after its start anyway.
    const started = await Promise.allSettled(
      busPorts.map((busPort, i) =>
        startRedisServer({
          args: [
            "--cluster-enabled",
            "yes",
            "--cluster-port",
            String(busPort),
            "--cluster-node-timeout",
            "5000",
            ...(options.announcePorts
              ? [
                  "--cluster-announce-ip",
                  "127.0.0.1",
                  "--cluster-announce-port",
                  String(options.announcePorts[i]),
                ]
              : []),
          ],
        }),
      ),
    );
    for (const result of started) if (result.status === "fulfilled") nodes.push(result.value);
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw new NodeStartError(String(failed.reason), { cause: failed.reason });
    for (const node of nodes)
      connections.push(new IORedis({ host: node.host, port: node.port, lazyConnect: false }));
    const bounds = nodes.map((_, i) => Math.floor((i * SLOT_COUNT) / size));
    await Promise.all(
      connections.map((connection, i) => {
        const end = i + 1 < size ? (bounds[i + 1] as number) : SLOT_COUNT;
        const slots = Array.from(
          { length: end - (bounds[i] as number) },
          (_, k) => (bounds[i] as number) + k,
        );
        return connection.call("CLUSTER", "ADDSLOTS", ...slots);
      }),
    );
    // Distinct config epochs up front, as redis-cli --cluster create sets them: no collision to resolve.
    await Promise.all(
      connections.map((connection, i) => connection.call("CLUSTER", "SET-CONFIG-EPOCH", i + 1)),
    );
    const [first] = connections;
    // A bus port other than port + 10000 must be named (CLUSTER MEET's third argument, Redis 7).
    for (const [i, node] of nodes.entries()) {
      if (i > 0) await first?.call("CLUSTER", "MEET", node.host, node.port, busPorts[i] as number);
    }
    await waitUntilFormed(connections, Date.now() + 15_000);
    return {
      nodes,
      connections,
      nodeOf: (slot) => bounds.findLastIndex((start) => start <= slot),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
