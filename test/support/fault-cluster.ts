/**
 * A private 3-master Redis Cluster whose masters are reached through fault proxies (fault-proxy.ts):
 * each master announces its proxy's port (CLUSTER SLOTS, MOVED), so a cluster client seeded at a
 * proxy sends everything through the proxies, where requests and answers can be lost as the REST
 * server loses them. For the over-cluster project's chaos and dead-letter fault tests.
 */

import type { Fault } from "../../infra/rest-server/faults.ts";
import { keySlot } from "../../infra/rest-server/key-slot.ts";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { startRedisCluster } from "./redis-cluster.ts";

export interface FaultCluster {
  /** The proxies' addresses, one per master: seeds for a cluster client. */
  seeds: { host: string; port: number }[];
  setFault(fault: Fault | null): void;
  /** Faults injected so far, over every proxy. */
  fired(): number;
  /** The master (its own address, not its proxy's) holding `key`'s slot. */
  serverOf(key: string): { host: string; port: number };
  stop(): Promise<void>;
}

export async function startFaultCluster(size = 3): Promise<FaultCluster> {
  // The proxies first (their ports are what the masters announce); each is told its master after.
  const targets = Array.from({ length: size }, () => ({ host: "127.0.0.1", port: 0 }));
  const proxies: FaultProxy[] = [];
  try {
    for (const target of targets) proxies.push(await startFaultProxy(target));
  } catch (error) {
    await Promise.all(proxies.map((proxy) => proxy.cut()));
    throw error;
  }
  const cluster = await startRedisCluster(size, { announcePorts: proxies.map((proxy) => proxy.port) }).catch(
    async (error) => {
      await Promise.all(proxies.map((proxy) => proxy.cut()));
      throw error;
    },
  );
  for (const [i, node] of cluster.nodes.entries()) Object.assign(targets[i] ?? {}, { port: node.port });
  return {
    seeds: proxies.map(({ host, port }) => ({ host, port })),
    setFault: (fault) => {
      for (const proxy of proxies) proxy.setFault(fault);
    },
    fired: () => proxies.reduce((sum, proxy) => sum + proxy.fired, 0),
    serverOf: (key) => {
      const node = cluster.nodes[cluster.nodeOf(keySlot(key))];
      if (!node) throw new Error(`no master holds ${key}`);
      return { host: node.host, port: node.port };
    },
    stop: async () => {
      await Promise.all(proxies.map((proxy) => proxy.cut()));
      await cluster.stop();
    },
  };
}
