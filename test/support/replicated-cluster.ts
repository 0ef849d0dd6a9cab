/**
 * A local Redis Cluster with a replica per master, for the failover test (test/support/redis-cluster.ts
 * makes masters only): real redis-servers in cluster mode on free loopback ports, each with an explicit
 * cluster bus port (port + 10000 may lie beyond 65535), joined by `redis-cli --cluster create`, ready
 * once every node still up reports cluster_state:ok. `kill()` on a node crashes it (SIGKILL).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Redis as IORedis } from "ioredis";
import { freePort, type RedisServer, startRedisServer } from "../../infra/redis-server.ts";

const run = promisify(execFile);

export interface LocalCluster {
  nodes: RedisServer[];
  /** A direct connection to one node (the caller disconnects it). */
  connect(node: RedisServer): IORedis;
  /** The nodes that are masters now, with the connection used to ask. */
  masters(): Promise<RedisServer[]>;
  /** Resolves once every node still up reports cluster_state:ok (after a failover too). */
  ready(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startReplicatedCluster(masters: number, nodeTimeoutMs = 1000): Promise<LocalCluster> {
  const replicas = 1;
  const count = masters * (1 + replicas);
  const args = ["--cluster-enabled", "yes"];
  const busPorts: number[] = [];
  for (let i = 0; i < count; i++) busPorts.push(await freePort());
  const nodes = await Promise.all(
    busPorts.map((bus) =>
      startRedisServer({
        args: [...args, "--cluster-port", String(bus), "--cluster-node-timeout", String(nodeTimeoutMs)],
      }),
    ),
  );
  const down = new Set<RedisServer>();
  const connect = (node: RedisServer) => new IORedis({ host: node.host, port: node.port, lazyConnect: true });
  const ask = async (node: RedisServer, ...command: string[]): Promise<string | undefined> => {
    const client = connect(node);
    try {
      await client.connect();
      return String(await client.call(command[0] as string, ...command.slice(1)));
    } catch {
      return undefined;
    } finally {
      client.disconnect();
    }
  };
  const cluster: LocalCluster = {
    nodes,
    connect,
    async masters() {
      const roles = await Promise.all(nodes.map(async (node) => [node, await ask(node, "ROLE")] as const));
      return roles.filter(([, role]) => role?.startsWith("master")).map(([node]) => node);
    },
    async ready(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const up = nodes.filter((node) => !down.has(node));
        const states = await Promise.all(up.map((node) => ask(node, "CLUSTER", "INFO")));
        if (states.every((info) => info?.includes("cluster_state:ok"))) return;
        if (Date.now() > deadline) throw new Error("the local cluster did not become ready");
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      await Promise.all(nodes.map((node) => node.stop()));
    },
  };
  const kill = nodes.map((node) => node.kill.bind(node));
  nodes.forEach((node, i) => {
    node.kill = async () => {
      down.add(node);
      await kill[i]?.();
    };
  });
  const addresses = nodes.map((node) => `${node.host}:${node.port}`);
  await run("redis-cli", [
    "--cluster",
    "create",
    ...addresses,
    "--cluster-replicas",
    String(replicas),
    "--cluster-yes",
  ]);
  await cluster.ready();
  return cluster;
}
