/**
 * A TCP proxy in front of one redis-server that does to a TCP client what the REST server's fault
 * injection (infra/rest-server/faults.ts) does to a REST client: `fail-before` drops the connection
 * before a command is forwarded (it never runs), `drop-after` forwards it and drops the connection
 * before its answer comes back (it runs, its answer is lost); `command`, `every` and `times` choose
 * the commands as there, counted per command — but never a connection's own setup (ioredis's
 * CLIENT SETINFO and INFO ready check on each connect): a REST request has none, and a fault counted
 * on them would kill every reconnect alike. A dropped connection loses the answers of every command
 * in flight on it, as TCP does. `cut()` kills it as a dying process's sockets go: every
 * connection destroyed mid-stream, later ones refused. For the chaos and crash tests over TCP.
 */
import { createConnection, createServer, type Socket } from "node:net";
import { type Fault, FaultInjector } from "../../infra/rest-server/faults.ts";

export interface FaultProxy {
  host: string;
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: `redis://${string}`;
  /** Only `fail-before` and `drop-after` have a meaning here; null clears. */
  setFault(fault: Fault | null): void;
  /** How many commands were failed or had their answer dropped so far. */
  readonly fired: number;
  /** Destroys every connection and stops listening. */
  cut(): Promise<void>;
}

/** Where the RESP array at `from` ends and its command's name (lower case), once it is all there. */
export function nextCommand(buffer: Buffer, from: number): { end: number; name: string } | undefined {
  const line = (at: number) => {
    const cr = buffer.indexOf("\r\n", at);
    return cr < 0 ? undefined : { text: buffer.toString("latin1", at, cr), next: cr + 2 };
  };
  const header = line(from);
  if (!header) return undefined;
  if (!header.text.startsWith("*")) throw new Error(`the fault proxy reads RESP arrays, not ${header.text}`);
  let at = header.next;
  let name = "";
  for (let i = 0; i < Number(header.text.slice(1)); i++) {
    const size = line(at);
    if (!size) return undefined;
    const end = size.next + Number(size.text.slice(1));
    if (buffer.length < end + 2) return undefined;
    if (i === 0) name = buffer.toString("latin1", size.next, end).toLowerCase();
    at = end + 2;
  }
  return { end: at, name };
}

/** What a client sends to set up a connection, not as a request of its own. */
const setup = new Set(["client", "info", "hello", "auth", "select", "readonly", "cluster", "ping"]);

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const faults = new FaultInjector();
  let fired = 0;
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
    let answering = true;
    let pending = Buffer.alloc(0);
    upstream.on("data", (chunk) => {
      if (answering) client.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("data", (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let offset = 0;
      for (let command = nextCommand(pending, offset); command; command = nextCommand(pending, offset)) {
        const fault = setup.has(command.name) ? null : faults.take([command.name]);
        if (fault) fired += 1;
        if (fault?.kind === "fail-before") {
          answering = false;
          client.destroy();
          upstream.destroy();
          return;
        }
        upstream.write(pending.subarray(offset, command.end));
        offset = command.end;
        if (fault?.kind === "drop-after") {
          // Redis runs what it has read before it sees the end; nothing of it goes back.
          answering = false;
          upstream.end();
          client.destroy();
          return;
        }
      }
      pending = pending.subarray(offset);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("the fault proxy has no port");
  const { port } = address;
  return {
    host: "127.0.0.1",
    port,
    url: `redis://127.0.0.1:${port}`,
    get fired() {
      return fired;
    },
    setFault: (fault) => {
      if (fault && fault.kind !== "fail-before" && fault.kind !== "drop-after")
        throw new Error(`the fault proxy cannot inject ${fault.kind}`);
      faults.set(fault);
    },
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
