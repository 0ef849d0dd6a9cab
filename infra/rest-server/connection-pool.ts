/**
 * A small pool of RESP connections. Each HTTP request leases one connection for its whole duration, so
 * a pipeline's commands run in order on one connection and a MULTI on a leased connection can never
 * interleave with another request's commands.
 */
import { RespConnection } from "./resp-client.ts";

export class ConnectionPool {
  private readonly idle: RespConnection[] = [];
  private readonly leased = new Set<RespConnection>();
  private readonly waiters: ((connection: RespConnection | null) => void)[] = [];
  private open = 0;
  private closed = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly size: number,
  ) {}

  /** Runs `work` on a leased connection. A connection that broke during `work` is not reused. */
  async use<T>(work: (connection: RespConnection) => Promise<T>): Promise<T> {
    const connection = await this.acquire();
    this.leased.add(connection);
    try {
      return await work(connection);
    } finally {
      this.leased.delete(connection);
      this.release(connection);
    }
  }

  private async acquire(): Promise<RespConnection> {
    if (this.closed) throw new Error("the REST server is closing");
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      if (connection.healthy) return connection;
      this.open -= 1;
    }
    if (this.open < this.size) {
      this.open += 1;
      try {
        return await RespConnection.open(this.host, this.port);
      } catch (error) {
        this.open -= 1;
        this.wakeOneWaiter();
        throw error;
      }
    }
    const connection = await new Promise<RespConnection | null>((resolve) => this.waiters.push(resolve));
    if (connection) return connection;
    // The connection a waiter was promised broke; a slot is free again, so start over.
    return await this.acquire();
  }

  private release(connection: RespConnection): void {
    if (this.closed || !connection.healthy) {
      connection.close();
      this.open -= 1;
      this.wakeOneWaiter();
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter(connection);
    else this.idle.push(connection);
  }

  private wakeOneWaiter(): void {
    this.waiters.shift()?.(null);
  }

  close(): void {
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.close();
    for (const connection of this.leased) connection.close();
    for (const waiter of this.waiters.splice(0)) waiter(null);
  }
}
