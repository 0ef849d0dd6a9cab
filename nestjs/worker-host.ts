/**
 * The base class of a processor: `process(job)` does the work (a throw retries with the job's
 * `attempts`/`backoff`), `this.worker` is the nimbusq Worker the module made for it.
 */
import type { ActiveJob, Worker } from "../core/index.ts";

const workers = new WeakMap<WorkerHost, Worker>();

/**
 * @example
 * @Processor("email")
 * export class EmailProcessor extends WorkerHost {
 *   constructor(private readonly mailer: MailService) { super(); }
 *   async process(job: ActiveJob<{ to: string }>) { return await this.mailer.send(job.data.to); }
 * }
 */
export abstract class WorkerHost<TWorker extends Worker = Worker> {
  /**
   * The worker that runs this processor: made in `onModuleInit`, so read it from `onApplicationBootstrap`
   * on. Under `nestWorkerHandler` it exists from the first invocation on.
   */
  get worker(): TWorker {
    const worker = workers.get(this);
    if (!worker)
      throw new Error(
        `${this.constructor.name}: the worker is not made yet (it is made in onModuleInit; under nestWorkerHandler, at the first invocation)`,
      );
    return worker as TWorker;
  }

  /** Runs one job; the lock token is also `job.token`. */
  abstract process(job: ActiveJob<unknown, unknown>, token?: string): Promise<unknown>;
}

/** @internal Gives a processor its worker (the explorer and nestWorkerHandler call it). */
export function attachWorker(host: WorkerHost, worker: Worker): void {
  workers.set(host, worker);
}
