/**
 * Global setup of the "over-cluster" project (vitest.config.ts): one local 3-master Redis Cluster for
 * the whole run (test/support/redis-cluster.ts), its masters provided as `clusterNodes` with the first
 * slot each serves. stack.ts then gives cluster clients and hash-tagged prefixes (NQ_TRANSPORT=cluster).
 */
import type { TestProject } from "vitest/node";
import { SLOT_COUNT } from "../../infra/rest-server/key-slot.ts";
import { type RedisCluster, startRedisCluster } from "./redis-cluster.ts";
import type { ClusterNode } from "./stack.ts";

declare module "vitest" {
  export interface ProvidedContext {
    clusterNodes: ClusterNode[];
  }
}

let cluster: RedisCluster | undefined;

export async function setup(project: TestProject): Promise<void> {
  cluster = await startRedisCluster(3);
  const size = cluster.nodes.length;
  project.provide(
    "clusterNodes",
    cluster.nodes.map((node, i) => ({
      host: node.host,
      port: node.port,
      firstSlot: Math.floor((i * SLOT_COUNT) / size),
    })),
  );
}

export async function teardown(): Promise<void> {
  if (!cluster) return;
  // Where the run's tests landed: each master should hold some of the hash-tagged prefixes' keys.
  const sizes = await Promise.all(cluster.connections.map((node) => node.dbsize().catch(() => -1)));
  console.log(`over-cluster: keys per master at the end of the run: ${sizes.join(", ")}`);
  await cluster.stop();
}
