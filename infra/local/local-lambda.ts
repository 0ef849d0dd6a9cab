/**
 * Plays AWS Lambda on one machine: functions registered by name run in-process when invoked
 * asynchronously, each with a context whose remaining time counts down from the function's timeout,
 * at most `reservedConcurrency` at once (further invocations wait, as throttled async events do).
 */

export interface LocalContext {
  functionName: string;
  awsRequestId: string;
  getRemainingTimeInMillis(): number;
}

export type LocalHandler = (event: unknown, context: LocalContext) => Promise<unknown>;

export interface LocalFunction {
  handler: LocalHandler;
  timeoutMs: number;
  reservedConcurrency?: number;
}

export interface InvocationRecord {
  functionName: string;
  startedAt: number;
  durationMs: number;
  result?: unknown;
  error?: string;
  timedOut: boolean;
}

export class LocalLambda {
  private readonly functions = new Map<string, LocalFunction>();
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly onInvocation: (record: InvocationRecord) => void = () => {}) {}

  register(name: string, fn: LocalFunction): void {
    this.functions.set(name, fn);
  }

  /** Asynchronous invoke (InvocationType "Event"): returns once accepted, the run goes on. */
  invoke = async (functionName: string, event: unknown): Promise<void> => {
    void this.start(functionName, event);
  };

  /** An invoke that resolves once the run has ended (the local stack's first sweep, before the demo). */
  invokeAndWait = async (functionName: string, event: unknown): Promise<void> => {
    await this.start(functionName, event);
  };

  private start(functionName: string, event: unknown): Promise<void> {
    const fn = this.functions.get(functionName);
    if (!fn) throw new Error(`no local function named "${functionName}"`);
    if (this.stopped) return Promise.resolve();
    const run = this.run(functionName, fn, event);
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return run;
  }

  private async slot(name: string, limit: number): Promise<void> {
    while ((this.running.get(name) ?? 0) >= limit) {
      await new Promise<void>((resolve) =>
        this.waiting.set(name, [...(this.waiting.get(name) ?? []), resolve]),
      );
    }
    this.running.set(name, (this.running.get(name) ?? 0) + 1);
  }

  private release(name: string): void {
    this.running.set(name, (this.running.get(name) ?? 1) - 1);
    const next = this.waiting.get(name)?.shift();
    next?.();
  }

  private async run(name: string, fn: LocalFunction, event: unknown): Promise<void> {
    await this.slot(name, fn.reservedConcurrency ?? Number.POSITIVE_INFINITY);
    const startedAt = Date.now();
    const end = startedAt + fn.timeoutMs;
    const context: LocalContext = {
      functionName: name,
      awsRequestId: crypto.randomUUID(),
      getRemainingTimeInMillis: () => Math.max(0, end - Date.now()),
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), fn.timeoutMs);
    });
    const record: InvocationRecord = { functionName: name, startedAt, durationMs: 0, timedOut: false };
    try {
      const outcome = await Promise.race([fn.handler(event, context), timeout]);
      if (outcome === "timeout") record.timedOut = true;
      else record.result = outcome;
    } catch (error) {
      record.error = error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
      record.durationMs = Date.now() - startedAt;
      this.release(name);
      this.onInvocation(record);
    }
  }

  /** Stops accepting invocations and waits (at most `graceMs`) for running ones. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopped = true;
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, graceMs))]);
  }
}
