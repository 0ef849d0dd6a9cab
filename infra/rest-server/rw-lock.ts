/**
 * A first-come-first-served shared/exclusive lock. Waiters are granted strictly in arrival order, so a
 * steady stream of shared holders cannot starve an exclusive one (and vice versa).
 */
interface Waiter {
  readonly exclusive: boolean;
  readonly grant: () => void;
}

export class RwLock {
  private sharedHolders = 0;
  private exclusiveHeld = false;
  private readonly queue: Waiter[] = [];

  async withShared<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire(false);
    try {
      return await work();
    } finally {
      this.sharedHolders -= 1;
      this.drain();
    }
  }

  async withExclusive<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire(true);
    try {
      return await work();
    } finally {
      this.exclusiveHeld = false;
      this.drain();
    }
  }

  private acquire(exclusive: boolean): Promise<void> {
    return new Promise((grant) => {
      this.queue.push({ exclusive, grant });
      this.drain();
    });
  }

  private drain(): void {
    for (let next = this.queue[0]; next; next = this.queue[0]) {
      if (this.exclusiveHeld) return;
      if (next.exclusive) {
        if (this.sharedHolders > 0) return;
        this.exclusiveHeld = true;
      } else {
        this.sharedHolders += 1;
      }
      this.queue.shift();
      next.grant();
    }
  }
}
