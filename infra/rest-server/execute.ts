/**
 * Runs the commands of one HTTP request against Redis. A leased connection is never shared, so MULTI
 * on it cannot capture another request's commands, and it goes back to the pool only in a clean state.
 */
import type { Command } from "./command-request.ts";
import { ConnectionPool } from "./connection-pool.ts";
import type { RespReply } from "./resp-client.ts";

/** A redis-server's address. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Where a request's commands run: one redis-server (`SingleNodeBackend`), or a Redis Cluster whose
 * commands are routed by their keys (`cluster-backend.ts`).
 */
export interface Backend {
  /** Runs commands in order, each with its own reply. */
  pipeline(commands: readonly Command[]): Promise<RespReply[]>;
  /** MULTI, the commands, EXEC. */
  transaction(commands: readonly Command[]): Promise<TransactionOutcome>;
  /** Runs one command (routed by its keys; a keyless one on any node). */
  call(command: Command): Promise<RespReply>;
  /** The servers behind it (billing reads each one's INFO). */
  nodes(): readonly RedisAddress[];
  close(): void;
}

export class SingleNodeBackend implements Backend {
  private readonly pool: ConnectionPool;

  constructor(
    private readonly address: RedisAddress,
    poolSize: number,
  ) {
    this.pool = new ConnectionPool(address.host, address.port, poolSize);
  }

  pipeline(commands: readonly Command[]): Promise<RespReply[]> {
    return runPipeline(this.pool, commands);
  }

  transaction(commands: readonly Command[]): Promise<TransactionOutcome> {
    return runTransaction(this.pool, commands);
  }

  call(command: Command): Promise<RespReply> {
    return this.pool.use((connection) => connection.call(...command.args));
  }

  nodes(): readonly RedisAddress[] {
    return [this.address];
  }

  close(): void {
    this.pool.close();
  }
}

/** Runs commands in order on one connection, written in one go; each gets its own reply. */
export async function runPipeline(pool: ConnectionPool, commands: readonly Command[]): Promise<RespReply[]> {
  if (commands.length === 0) return [];
  return await pool.use((connection) => connection.send(commands.map((command) => command.args)));
}

export type TransactionOutcome =
  | { readonly kind: "committed"; readonly replies: RespReply[] }
  | { readonly kind: "discarded"; readonly error: string };

/**
 * MULTI, the commands, EXEC, written together. This is safe on a leased connection: MULTI can only fail
 * inside another MULTI, and EXEC always ends the transaction, committed or discarded. A reply that does
 * not fit that picture means the connection's state is unknown, so it is closed instead of reused.
 */
export async function runTransaction(
  pool: ConnectionPool,
  commands: readonly Command[],
): Promise<TransactionOutcome> {
  return await pool.use(async (connection) => {
    const replies = await connection.send([["MULTI"], ...commands.map((command) => command.args), ["EXEC"]]);
    const multi = replies[0];
    const exec = replies.at(-1);
    if (multi?.kind !== "status" || multi.text !== "OK") {
      connection.close();
      throw new Error(`MULTI was refused: ${describe(multi)}`);
    }
    if (exec?.kind === "array") return { kind: "committed", replies: exec.items };
    if (exec?.kind === "error") return { kind: "discarded", error: exec.text };
    if (exec?.kind === "nil") return { kind: "discarded", error: "EXECABORT Transaction discarded" };
    connection.close();
    throw new Error(`EXEC answered unexpectedly: ${describe(exec)}`);
  });
}

function describe(reply: RespReply | undefined): string {
  if (!reply) return "no reply";
  if (reply.kind === "status" || reply.kind === "error") return `${reply.kind} ${reply.text}`;
  return reply.kind;
}
