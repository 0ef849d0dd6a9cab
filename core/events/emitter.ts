/**
 * A small typed event emitter (core/ cannot use node:events). Listeners are notifications after the
 * fact: one that throws is reported to the `error` listeners (or swallowed when there are none) and
 * never changes what happened to a job.
 */

// biome-ignore lint/suspicious/noExplicitAny: listener argument lists are defined by each event map
type Listener = (...args: any[]) => unknown;

export class Emitter<TEvents extends { [K in keyof TEvents]: Listener }> {
  private readonly listeners = new Map<keyof TEvents, Set<Listener>>();

  on<K extends keyof TEvents>(event: K, listener: TEvents[K]): this {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return this;
  }

  once<K extends keyof TEvents>(event: K, listener: TEvents[K]): this {
    const wrapper = ((...args: unknown[]) => {
      this.off(event, wrapper as TEvents[K]);
      return listener(...args);
    }) as TEvents[K];
    return this.on(event, wrapper);
  }

  off<K extends keyof TEvents>(event: K, listener: TEvents[K]): this {
    this.listeners.get(event)?.delete(listener);
    return this;
  }

  listenerCount(event: keyof TEvents): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  /** Calls each listener; a throwing or rejecting listener is reported as an `error` event. */
  protected emit<K extends keyof TEvents>(event: K, ...args: Parameters<TEvents[K]>): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        const result = listener(...args);
        if (result instanceof Promise)
          result.catch((error: unknown) => this.reportListenerError(event, error));
      } catch (error) {
        this.reportListenerError(event, error);
      }
    }
  }

  private reportListenerError(event: keyof TEvents, error: unknown): void {
    if (event === "error") return;
    const wrapped = error instanceof Error ? error : new Error(String(error));
    for (const listener of [...(this.listeners.get("error" as keyof TEvents) ?? [])]) {
      try {
        listener(wrapped);
      } catch {
        // An error listener that throws has nowhere left to report to.
      }
    }
  }
}
