/**
 * A loopback TCP proxy in front of one server (127.0.0.1 only) that can cut every open connection on
 * demand: the dropped connections of a network blip, a NAT or load balancer timing out, a node's
 * connection limit. `cut()` resets every client connection (TCP RST) at once; `cut({ mid: "reply" })` lets each pair's
 * next reply chunk through only in part before destroying it (the client sees a reply cut off in the
 * middle), `cut({ mid: "command" })` the same with its next command (the server never gets it whole).
 * A pair with nothing moving that way within `graceMs` is cut plainly.
 */
import { createServer, type Server, Socket } from "node:net";

export interface CutCounts {
  /** Pairs destroyed with nothing in flight (or nothing moving within the grace). */
  plain: number;
  /** Pairs destroyed after half a reply reached the client. */
  midReply: number;
  /** Pairs destroyed after half a command reached the server. */
  midCommand: number;
}

export interface CuttingProxy {
  port: number;
  url: `redis://${string}`;
  /** Connections open now. */
  open(): number;
  /** Destroys every open connection; resolves once all are gone, with how each was cut. */
  cut(options?: { mid?: Direction; graceMs?: number }): Promise<CutCounts>;
  close(): Promise<void>;
}

type Direction = "reply" | "command";

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Set while a mid-stream cut is armed: the next chunk that way goes half through, then both die. */
  armed?: { direction: Direction; done: () => void };
  /** A mid-stream cut is under way: nothing more goes through. */
  dying?: boolean;
}

export async function startCuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  const pairs = new Set<Pair>();

  const server: Server = createServer((client) => {
    const upstream = new Socket();
    const pair: Pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    const relay = (from: Socket, to: Socket, direction: Direction) =>
      from.on("data", (chunk: Buffer) => {
        if (pair.dying) return;
        const armed = pair.armed;
        if (armed?.direction === direction && chunk.length > 1) {
          pair.dying = true;
          pair.armed = undefined;
          // Destroyed once the half is handed to the kernel, so it does reach the other side.
          to.write(chunk.subarray(0, Math.floor(chunk.length / 2)), armed.done);
          return;
        }
        if (!to.write(chunk)) {
          from.pause();
          to.once("drain", () => from.resume());
        }
      });
    relay(upstream, client, "reply");
    relay(client, upstream, "command");
    for (const socket of [client, upstream]) {
      socket.on("error", end);
      socket.on("close", end);
    }
    upstream.connect(target.port, target.host);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;

  /** Both sides closed; `reset`: the client's with a TCP RST (as a NAT or load balancer drops it). */
  function destroy(pair: Pair, reset = false): void {
    pair.armed = undefined;
    pairs.delete(pair);
    if (reset && !pair.client.destroyed) pair.client.resetAndDestroy();
    else pair.client.destroy();
    pair.upstream.destroy();
  }

  async function cut({ mid, graceMs = 300 }: { mid?: Direction; graceMs?: number } = {}): Promise<CutCounts> {
    const counts: CutCounts = { plain: 0, midReply: 0, midCommand: 0 };
    const open = [...pairs];
    if (!mid) {
      for (const pair of open) destroy(pair, true);
      counts.plain = open.length;
      return counts;
    }
    await Promise.all(
      open.map(
        (pair) =>
          new Promise<void>((resolve) => {
            let settled = false;
            const settle = (kind: keyof CutCounts | undefined) => {
              if (settled) return;
              settled = true;
              clearTimeout(timer);
              if (kind) counts[kind] += 1;
              destroy(pair);
              resolve();
            };
            const timer = setTimeout(() => settle("plain"), graceMs);
            pair.armed = { direction: mid, done: () => settle(mid === "reply" ? "midReply" : "midCommand") };
            // Closed by either side meanwhile: gone, not counted as a cut of ours.
            pair.client.once("close", () => settle(undefined));
          }),
      ),
    );
    return counts;
  }

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    open: () => pairs.size,
    cut,
    close: async () => {
      for (const pair of [...pairs]) destroy(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
