/**
 * The command-line entry point, run as a real child process through tsx: it serves, prints where, and
 * stops cleanly on SIGINT; bad flags exit with code 2 and say what is wrong.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";

const TSX = "node_modules/.bin/tsx";
const CLI = "infra/rest-server/cli.ts";

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis.stop();
});

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; finished: Promise<Finished> } {
  const child = spawn(TSX, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const finished = once(child, "exit").then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, finished };
}

/** Listens rather than iterating the stream: leaving a `for await` would destroy stdout under the CLI. */
function waitForUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /UPSTASH_REDIS_REST_URL=(\S+)/.exec(seen);
      if (!match?.[1]) return;
      child.stdout?.off("data", onData);
      resolve(match[1]);
    };
    child.stdout?.on("data", onData);
    child.once("exit", () => reject(new Error(`the CLI exited without printing its URL: ${seen}`)));
  });
}

describe("rest-server CLI", () => {
  it("serves the client, then exits 0 on SIGINT", async () => {
    const { child, finished } = run(["--redis-url", redis.url, "--port", "0", "--token", "cli-token"]);
    try {
      const url = await waitForUrl(child);
      const client = new Redis({ url, token: "cli-token", enableAutoPipelining: false });
      expect(await client.set("cli:k", "abcd")).toBe("OK");
      expect(await client.get("cli:k")).toBe("abcd");
      // Upstash mode is on by default: Redis "up to 8.2", so a 7.0 form (SET with NX and GET) passes.
      expect(await client.set("cli:k", "x", { nx: true, get: true })).toBe("abcd");
      child.kill("SIGINT");
      expect((await finished).code).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("--redis62 refuses the Redis 7.0 forms an Upstash database on Redis 6.2 refused", async () => {
    const { child, finished } = run([
      "--redis-url",
      redis.url,
      "--port",
      "0",
      "--token",
      "cli-token",
      "--redis62",
    ]);
    try {
      const url = await waitForUrl(child);
      const client = new Redis({ url, token: "cli-token", enableAutoPipelining: false });
      await expect(client.set("cli:k2", "x", { nx: true, get: true })).rejects.toThrow(
        /Upstash promises Redis 6.2/,
      );
      child.kill("SIGINT");
      expect((await finished).code).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("reads REDIS_URL, PORT and UPSTASH_REDIS_REST_TOKEN from the environment", async () => {
    const { child, finished } = run([], {
      REDIS_URL: redis.url,
      PORT: "0",
      UPSTASH_REDIS_REST_TOKEN: "env-token",
    });
    try {
      const url = await waitForUrl(child);
      const client = new Redis({ url, token: "env-token", enableAutoPipelining: false });
      expect(await client.ping()).toBe("PONG");
      child.kill("SIGTERM");
      const result = await finished;
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("UPSTASH_REDIS_REST_TOKEN=env-token");
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("starts and stops its own redis-server when given no Redis URL", async () => {
    const { child, finished } = run(["--port", "0", "--no-upstash-mode"], { REDIS_URL: "" });
    try {
      const url = await waitForUrl(child);
      const client = new Redis({ url, token: "dev-token", enableAutoPipelining: false });
      expect(await client.incr("cli:own")).toBe(1);
      expect(await client.set("cli:own", "2", { nx: true, get: true })).toBe(1);
      child.kill("SIGINT");
      const result = await finished;
      expect(result.code).toBe(0);
      const redisUrl = /started redis-server at redis:\/\/[^:]+:(\d+)/.exec(result.stdout);
      expect(redisUrl?.[1]).toBeDefined();
      const probe = connect(Number(redisUrl?.[1]), "127.0.0.1");
      const refused = await new Promise<boolean>((resolve) => {
        probe.once("connect", () => resolve(false));
        probe.once("error", () => resolve(true));
      });
      probe.destroy();
      expect(refused).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it.each([
    [["--bogus"], /Unknown option '--bogus'/],
    [["--port", "99999"], /--port must be an integer from 0 to 65535/],
    [["--redis-url", "http://x"], /--redis-url must start with redis:\/\//],
    [["--host", "0.0.0.0"], /needs an explicit --token/],
  ])("exits 2 with a clear message for %j", async (args, message) => {
    const result = await run(args, { REDIS_URL: redis.url }).finished;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain("Usage:");
  });
});
