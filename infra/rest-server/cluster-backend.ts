/**
 * Cluster mode: the REST server in front of a Redis Cluster, as a cluster-aware client would be. Each
 * command goes to the master that owns the slot of its first key (scripts: of KEYS[1]); keys come from
 * Redis's own `COMMAND` table, read once at start. Keyless commands run on one node, except those that
 * must reach every node (`SCRIPT LOAD|FLUSH|EXISTS`, `FLUSHALL`, `FLUSHDB`). A pipeline runs in order,
 * consecutive commands of one node written together; a transaction runs on the node of its first key,
 * where Redis itself refuses keys of other slots. A `MOVED` or `ASK` reply re-reads the slot map and
 * sends that command again to the node it names (cluster topology changes are not otherwise followed).
 *
 * Redis refuses what a cluster cannot do — declared keys of several slots (`CROSSSLOT`), a script that
 * touches an undeclared key of another slot — and those errors reach the client unchanged.
 */
import type { Command } from "./command-request.ts";
import { ConnectionPool } from "./connection-pool.ts";
import { type Backend, type RedisAddress, runTransaction, type TransactionOutcome } from "./execute.ts";
import { keySlot, SLOT_COUNT } from "./key-slot.ts";
import { type KeyPosition, type KeyPositions, parseCommandTable } from "./lua-key-check.ts";
import { RespConnection, type RespReply } from "./resp-client.ts";

const SCRIPT_CALLS = new Set(["eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"]);
const EVERY_NODE = new Set(["flushall", "flushdb", "script"]);

/** The keys of `command` by Redis's key positions (movable and unknown ones: none). */
export function commandKeys(command: Command, positions: KeyPositions): string[] {
  const { args } = command;
  if (SCRIPT_CALLS.has(command.name)) return args.slice(3, 3 + (Number(args[2]) || 0));
  let position: KeyPosition | undefined = positions.get(command.name);
  if (position?.kind === "container") position = positions.get(`${command.name}|${args[1]?.toLowerCase()}`);
  if (position?.kind === "numkeys") {
    const at = position.destination ? 2 : 1;
    const keys = args.slice(at + 1, at + 1 + (Number(args[at]) || 0));
    return position.destination && args[1] !== undefined ? [args[1], ...keys] : keys;
  }
  if (position?.kind !== "range") return [];
  const last = position.last < 0 ? args.length + position.last : Math.min(position.last, args.length - 1);
  const keys: string[] = [];
  for (let i = position.first; i <= last; i += position.step) keys.push(args[i] as string);
  return keys;
}

/** `MOVED <slot> <host:port>` or `ASK <slot> <host:port>`: where to send the command instead. */
function redirectOf(reply: RespReply): { ask: boolean; address: string } | null {
  if (reply.kind !== "error") return null;
  const match = /^(MOVED|ASK) \d+ (\S+)$/.exec(reply.text);
  return match?.[1] && match[2] ? { ask: match[1] === "ASK", address: match[2] } : null;
}

export class ClusterBackend implements Backend {
  private readonly pools = new Map<string, ConnectionPool>();
  private slots: string[] = [];

  private constructor(
    private readonly seed: RedisAddress,
    private readonly poolSize: number,
    private readonly positions: KeyPositions,
  ) {}

  /** Reads the slot map and the key positions from `seed`, a node of the cluster. */
  static async connect(seed: RedisAddress, poolSize: number): Promise<ClusterBackend> {
    const connection = await RespConnection.open(seed.host, seed.port);
    try {
      const table = await connection.call("COMMAND");
      const backend = new ClusterBackend(seed, poolSize, parseCommandTable(table));
      backend.slots = ClusterBackend.slotMap(await connection.call("CLUSTER", "SLOTS"), seed.host);
      return backend;
    } finally {
      connection.close();
    }
  }

  private static slotMap(reply: RespReply, seedHost: string): string[] {
    if (reply.kind !== "array")
      throw new Error(`CLUSTER SLOTS answered ${reply.kind}: is the server in cluster mode?`);
    const slots: string[] = new Array(SLOT_COUNT);
    for (const range of reply.items) {
      if (range.kind !== "array") continue;
      const [start, end, master] = range.items;
      if (start?.kind !== "integer" || end?.kind !== "integer" || master?.kind !== "array") continue;
      const [host, port] = master.items;
      const hostText = host?.kind === "bulk" ? host.bytes.toString("utf8") : "";
      if (port?.kind !== "integer") continue;
      const address = `${hostText || seedHost}:${port.digits}`;
      for (let slot = Number(start.digits); slot <= Number(end.digits); slot++) slots[slot] = address;
    }
    for (let slot = 0; slot < SLOT_COUNT; slot++) {
      if (slots[slot] === undefined) throw new Error(`the cluster serves no node for slot ${slot}`);
    }
    return slots;
  }

  private async refresh(): Promise<void> {
    const reply = await this.poolOf(this.anyNode()).use((connection) => connection.call("CLUSTER", "SLOTS"));
    this.slots = ClusterBackend.slotMap(reply, this.seed.host);
  }

  private anyNode(): string {
    return this.slots[0] ?? `${this.seed.host}:${this.seed.port}`;
  }

  private poolOf(address: string): ConnectionPool {
    let pool = this.pools.get(address);
    if (!pool) {
      const colon = address.lastIndexOf(":");
      pool = new ConnectionPool(address.slice(0, colon), Number(address.slice(colon + 1)), this.poolSize);
      this.pools.set(address, pool);
    }
    return pool;
  }

  /** The node for `command`: its first key's slot owner, "*" for every node, else any node. */
  private route(command: Command): string {
    if (EVERY_NODE.has(command.name)) {
      const sub = command.args[1]?.toLowerCase();
      if (command.name !== "script" || sub === "load" || sub === "flush" || sub === "exists") return "*";
    }
    const [key] = commandKeys(command, this.positions);
    return key === undefined ? this.anyNode() : (this.slots[keySlot(key)] as string);
  }

  private async onEveryNode(command: Command): Promise<RespReply> {
    const replies = await Promise.all(
      this.nodes().map((node) =>
        this.poolOf(`${node.host}:${node.port}`).use((connection) => connection.call(...command.args)),
      ),
    );
    const failed = replies.find((reply) => reply.kind === "error");
    const [first] = replies;
    if (failed || !first) return failed ?? { kind: "error", text: "ERR no cluster node answered" };
    if (command.name !== "script" || command.args[1]?.toLowerCase() !== "exists" || first.kind !== "array")
      return first;
    // SCRIPT EXISTS: a script counts as loaded only when every node has it.
    const loaded = (reply: RespReply, i: number) => {
      const item = reply.kind === "array" ? reply.items[i] : undefined;
      return item?.kind === "integer" && item.digits === "1";
    };
    const items = first.items.map((_, i): RespReply => {
      const everywhere = replies.every((reply) => loaded(reply, i));
      return { kind: "integer", digits: everywhere ? "1" : "0" };
    });
    return { kind: "array", items };
  }

  /** Follows a MOVED or ASK reply once. */
  private async redirected(command: Command, reply: RespReply): Promise<RespReply> {
    const redirect = redirectOf(reply);
    if (!redirect) return reply;
    if (!redirect.ask) await this.refresh();
    return await this.poolOf(redirect.address).use(async (connection) => {
      if (!redirect.ask) return await connection.call(...command.args);
      const [, answer] = await connection.send([["ASKING"], command.args]);
      return answer ?? { kind: "error", text: "ERR no reply after ASKING" };
    });
  }

  async pipeline(commands: readonly Command[]): Promise<RespReply[]> {
    const replies: RespReply[] = [];
    let at = 0;
    while (at < commands.length) {
      const node = this.route(commands[at] as Command);
      if (node === "*") {
        replies.push(await this.onEveryNode(commands[at] as Command));
        at += 1;
        continue;
      }
      let end = at + 1;
      while (end < commands.length && this.route(commands[end] as Command) === node) end += 1;
      const group = commands.slice(at, end);
      const sent = await this.poolOf(node).use((connection) =>
        connection.send(group.map((command) => command.args)),
      );
      for (const [i, reply] of sent.entries())
        replies.push(await this.redirected(group[i] as Command, reply));
      at = end;
    }
    return replies;
  }

  transaction(commands: readonly Command[]): Promise<TransactionOutcome> {
    const keyed = commands.find((command) => commandKeys(command, this.positions).length > 0);
    const node = keyed ? this.route(keyed) : this.anyNode();
    return runTransaction(this.poolOf(node === "*" ? this.anyNode() : node), commands);
  }

  async call(command: Command): Promise<RespReply> {
    const [reply] = await this.pipeline([command]);
    return reply ?? { kind: "error", text: "ERR no reply" };
  }

  nodes(): readonly RedisAddress[] {
    return [...new Set(this.slots)].map((address) => {
      const colon = address.lastIndexOf(":");
      return { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
    });
  }

  close(): void {
    for (const pool of this.pools.values()) pool.close();
  }
}
