/**
 * A TCP proxy on 127.0.0.1 that holds every chunk from client to server for `delayMs` before passing
 * it on (in order, per connection); answers pass straight back. Put in front of redis-server, it adds
 * `delayMs` to each of BullMQ's round trips — the same delay the REST server's `delay` fault adds to
 * each HTTP request, by the same means (a `setTimeout` per request or chunk).
 */
import { connect, createServer, type Socket } from "node:net";

export interface DelayProxy {
  host: string;
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startDelayProxy(
  target: { host: string; port: number },
  delayMs: number,
): Promise<DelayProxy> {
  if (target.host !== "127.0.0.1" && target.host !== "localhost") {
    throw new Error(`the delay proxy only forwards to loopback, not ${target.host}`);
  }
  const open = new Set<Socket>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted += 1;
    const upstream = connect(target.port, target.host);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    open.add(client);
    open.add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    // Timers of one duration fire in the order they were set, so chunks keep their order.
    client.on("data", (chunk) => {
      setTimeout(() => {
        if (!upstream.destroyed) upstream.write(chunk);
      }, delayMs);
    });
    client.on("end", () => setTimeout(() => upstream.end(), delayMs));
    upstream.on("data", (chunk) => {
      if (!client.destroyed) client.write(chunk);
    });
    upstream.on("end", () => client.end());
    for (const socket of [client, upstream]) {
      socket.on("error", closeBoth);
      socket.on("close", closeBoth);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("the delay proxy has no port");
  return {
    host: "127.0.0.1",
    port: address.port,
    accepted: () => accepted,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of open) socket.destroy();
      open.clear();
      await closed;
    },
  };
}
