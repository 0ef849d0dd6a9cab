import { defineConfig } from "vitest/config";

/**
 * The interop and exactly-once suites (mixed fleet with a real BullMQ worker, chaos and crash
 * recovery, schedulers, flows, dead letters, groups), run again over TCP by the second and third projects,
 * all of them on the cluster too. Their faults come from fault proxies there (test/support/
 * fault-proxy.ts, fault-cluster.ts); only the REST server's own counts (billed commands, declared keys)
 * are skipped. Not here: test/worker/chaos-faults.test.ts, whose worker processes and faults are the
 * REST server's (HTTP 500 and proxy 503 answers) and whose Redis restarts sit behind it.
 */
const overTcp = [
  "test/interop/*.test.ts",
  "test/interop-worker/*.test.ts",
  "test/flows/*.test.ts",
  "test/schedulers/interop.test.ts",
  "test/schedulers/iterations.test.ts",
  "test/schedulers/storage.test.ts",
  "test/schedulers/sweeper.test.ts",
  "test/dead-letter/*.test.ts",
  "test/worker/pipeline-chaos.test.ts",
  "test/worker/reliability.test.ts",
  "test/groups/groups-basics.test.ts",
  "test/groups/groups-moves.test.ts",
  "test/groups/groups-recovery.test.ts",
  "test/tcp/over-tcp.test.ts",
];

/**
 * Three projects over one run: every test file over Upstash's REST protocol (the local REST server in
 * front of the run's redis-server); the suites above again over TCP (NQ_TRANSPORT=tcp:
 * test/support/stack.ts's sharedRedis gives createRedis({ url: "redis://…" })), with no REST server
 * between — issue 27's "the same suites over the TCP port"; and the same suites against a local
 * 3-master Redis Cluster (NQ_TRANSPORT=cluster: createRedis({ url, cluster: true }), hash-tagged
 * prefixes, BullMQ on an ioredis Cluster), started by that project's global setup only.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "rest",
          include: ["test/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "over-tcp",
          include: overTcp,
          env: { NQ_TRANSPORT: "tcp" },
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "over-cluster",
          include: overTcp,
          env: { NQ_TRANSPORT: "cluster" },
          globalSetup: ["test/support/cluster-setup.ts"],
        },
      },
    ],
  },
});
