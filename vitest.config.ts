import { defineConfig } from "vitest/config";

/**
 * Two projects over one run: every test file over Upstash's REST protocol (the local REST server in
 * front of the run's redis-server), and the interop and exactly-once suites again over TCP
 * (NQ_TRANSPORT=tcp: test/support/stack.ts's sharedRedis gives createRedis({ url: "redis://…" })), with no
 * REST server between — issue 27's "the same suites over the TCP port".
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
          include: [
            "test/interop/*.test.ts",
            "test/interop-worker/*.test.ts",
            "test/flows/*.test.ts",
            "test/schedulers/iterations.test.ts",
            "test/schedulers/storage.test.ts",
            "test/dead-letter/*.test.ts",
            "test/worker/pipeline-chaos.test.ts",
            "test/tcp/over-tcp.test.ts",
          ],
          exclude: [],
          env: { NQ_TRANSPORT: "tcp" },
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
    ],
  },
});
