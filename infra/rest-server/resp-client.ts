/**
 * A minimal RESP2 client over `node:net`. The REST server needs the exact reply types (status vs bulk,
 * errors nested inside arrays, integers wider than 2^53), which general-purpose clients flatten away.
 * One connection handles one caller at a time (see `connection-pool.ts`); replies are matched to
 * commands in order, so several commands may be written before the first reply arrives.
 */
import { connect, type Socket } from "node:net";

/** A RESP2 reply as Redis sent it. Integers keep their decimal text so values above 2^53 survive. */
export type RespReply =
  | { readonly kind: "status"; readonly text: string }
  | { readonly kind: "error"; readonly text: string }
  | { readonly kind: "integer"; readonly digits: string }
  | { readonly kind: "bulk"; readonly bytes: Buffer }
  | { readonly kind: "nil" }
  | { readonly kind: "array"; readonly items: RespReply[] };

/** One command: its name first, then its arguments. Strings are sent as UTF-8. */
export type RespCommand = readonly (string | Buffer)[];

const CRLF = Buffer.from("\r\n");

/** Serialises commands into one buffer, so a whole pipeline goes out in a single write. */
export function encodeCommands(commands: readonly RespCommand[]): Buffer {
  const parts: Buffer[] = [];
  for (const command of commands) {
    parts.push(Buffer.from(`*${command.length}\r\n`));
    for (const arg of command) {
      const bytes = typeof arg === "string" ? Buffer.from(arg, "utf8") : arg;
      parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
    }
  }
  return Buffer.concat(parts);
}

interface OpenArray {
  items: RespReply[];
  remaining: number;
}

/**
 * Incremental RESP2 parser. It consumes whole elements only and keeps the stack of arrays still being
 * filled, so a reply split across many TCP chunks is never re-parsed from its start, and a large bulk
 * string is not re-concatenated for every chunk that brings part of it.
 */
export class RespParser {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private needed = 1;
  private readonly open: OpenArray[] = [];

  constructor(private readonly onReply: (reply: RespReply) => void) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered < this.needed) return;
    let data = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    let offset = 0;
    for (;;) {
      const step = this.parseElement(data, offset);
      if (step === null) break;
      offset = step;
    }
    data = data.subarray(offset);
    this.chunks = data.length > 0 ? [data] : [];
    this.buffered = data.length;
  }

  /** Parses one element at `offset`; returns the offset after it, or null when more bytes are needed. */
  private parseElement(data: Buffer, offset: number): number | null {
    const lineEnd = data.indexOf(CRLF, offset);
    if (lineEnd < 0) {
      this.needed = data.length - offset + 1;
      return null;
    }
    const type = String.fromCharCode(data[offset] ?? 0);
    const line = data.toString("utf8", offset + 1, lineEnd);
    const next = lineEnd + 2;
    switch (type) {
      case "+":
        this.complete({ kind: "status", text: line });
        return next;
      case "-":
        this.complete({ kind: "error", text: line });
        return next;
      case ":":
        if (!/^-?\d+$/.test(line)) {
          throw new Error(`RESP protocol error: bad integer ${JSON.stringify(line)}`);
        }
        this.complete({ kind: "integer", digits: line });
        return next;
      case "$": {
        const length = parseLength(line);
        if (length < 0) {
          this.complete({ kind: "nil" });
          return next;
        }
        if (data.length < next + length + 2) {
          this.needed = next + length + 2 - offset;
          return null;
        }
        // Copy, so a retained reply does not pin the whole socket chunk it arrived in.
        this.complete({ kind: "bulk", bytes: Buffer.from(data.subarray(next, next + length)) });
        return next + length + 2;
      }
      case "*": {
        const count = parseLength(line);
        if (count < 0) this.complete({ kind: "nil" });
        else if (count === 0) this.complete({ kind: "array", items: [] });
        else this.open.push({ items: [], remaining: count });
        return next;
      }
      default:
        throw new Error(`RESP protocol error: unexpected type byte ${JSON.stringify(type)}`);
    }
  }

  private complete(reply: RespReply): void {
    this.needed = 1;
    let value = reply;
    for (;;) {
      const parent = this.open.at(-1);
      if (!parent) {
        this.onReply(value);
        return;
      }
      parent.items.push(value);
      parent.remaining -= 1;
      if (parent.remaining > 0) return;
      this.open.pop();
      value = { kind: "array", items: parent.items };
    }
  }
}

function parseLength(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    throw new Error(`RESP protocol error: bad length ${JSON.stringify(text)}`);
  }
  return value;
}

interface Pending {
  resolve(reply: RespReply): void;
  reject(error: Error): void;
}

/** One TCP connection to redis-server. Once broken it stays broken; callers open a new one. */
export class RespConnection {
  private readonly pending: Pending[] = [];
  private failure: Error | null = null;
  private readonly parser = new RespParser((reply) => this.pending.shift()?.resolve(reply));

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
  ) {
    socket.on("data", (chunk: Buffer) => {
      try {
        this.parser.push(chunk);
      } catch (error) {
        this.fail(error instanceof Error ? error : new Error(String(error)));
      }
    });
    socket.on("error", (error) => this.fail(error));
    socket.on("close", () => this.fail(new Error(`connection to redis at ${address} closed`)));
  }

  static open(host: string, port: number): Promise<RespConnection> {
    const address = `${host}:${port}`;
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, noDelay: true });
      const onError = (error: Error) => {
        socket.destroy();
        reject(new Error(`cannot connect to redis at ${address}: ${error.message}`, { cause: error }));
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        socket.off("error", onError);
        socket.setKeepAlive(true, 30_000);
        resolve(new RespConnection(socket, address));
      });
    });
  }

  get healthy(): boolean {
    return this.failure === null;
  }

  /** Writes every command at once and resolves with their replies in order. */
  send(commands: readonly RespCommand[]): Promise<RespReply[]> {
    if (this.failure) return Promise.reject(this.failure);
    const replies = commands.map(
      () => new Promise<RespReply>((resolve, reject) => this.pending.push({ resolve, reject })),
    );
    this.socket.write(encodeCommands(commands));
    return Promise.all(replies);
  }

  async call(...command: (string | Buffer)[]): Promise<RespReply> {
    const [reply] = await this.send([command]);
    if (!reply) throw new Error("redis sent no reply");
    return reply;
  }

  close(): void {
    this.fail(new Error(`connection to redis at ${this.address} was closed by the REST server`));
  }

  private fail(error: Error): void {
    if (!this.failure) this.failure = error;
    this.socket.destroy();
    for (const waiter of this.pending.splice(0)) waiter.reject(this.failure);
  }
}
