/**
 * A TCP proxy in front of one redis-server that can be cut at once, as a dying process's sockets are:
 * every open connection is destroyed mid-stream (whatever was sent may or may not have run, and its
 * answer never arrives) and later connections are refused. For crash tests over TCP, where the REST
 * project stops a doomed worker's own REST server instead.
 */
import { createConnection, createServer, type Socket } from "node:net";

export interface CutProxy {
  host: string;
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: `redis://${string}`;
  /** Destroys every connection and stops listening. */
  cut(): Promise<void>;
}

export async function startCutProxy(target: { host: string; port: number }): Promise<CutProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.host, port: target.port });
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("the cut proxy has no port");
  const { port } = address;
  return {
    host: "127.0.0.1",
    port,
    url: `redis://127.0.0.1:${port}`,
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
