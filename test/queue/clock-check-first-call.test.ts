/**
 * The clock check (a HEAD to the REST URL) goes out beside the client's first request, never when the
 * client is made: a Lambda function makes its client at import, and a request there would load Node's
 * HTTP stack into every cold start before the function has anything to send.
 */
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { createRedis } from "../../core/index.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { sharedConnectionOptions } from "../support/stack.ts";

let skewed: RestServer;
beforeAll(async () => {
  skewed = await startRestServer({ redis: sharedConnectionOptions(), token: "skewed", dateOffsetMs: 5000 });
});
afterAll(() => skewed.close());

it("sends nothing when the client is made, and checks the clock beside its first command", async () => {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  try {
    const quiet = createRedis({ url: skewed.url, token: "skewed", checkClock: false });
    await quiet.ping();
    const redis = createRedis({ url: skewed.url, token: "skewed" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(warn).not.toHaveBeenCalled();
    expect(await redis.ping()).toBe("PONG");
    await expect.poll(() => warn.mock.calls.length).toBe(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/clock is at least [45]\.\d s behind/);
  } finally {
    warn.mockRestore();
  }
});
