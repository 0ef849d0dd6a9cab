/**
 * Finds the @Processor classes of an application, makes each one's Worker (`onModuleInit`), subscribes
 * its @OnWorkerEvent methods, runs the autorun ones while the application lives
 * (`onApplicationBootstrap`) and closes them all on `app.close()` (`beforeApplicationShutdown`, before
 * the queues close): running jobs finish and are acked, leased but unstarted ones go back to wait.
 * In a context booted by nestWorkerHandler it makes no worker: the handler makes it per container.
 */
import {
  type BeforeApplicationShutdown,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from "@nestjs/common";
import type { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from "@nestjs/core";
import { type ActiveJob, type Processor, Worker, type WorkerEvents } from "../core/index.ts";
import type { OnWorkerEventMetadata } from "./decorators.ts";
import {
  type NestWorkerOptions,
  type NimbusqRootOptions,
  type ProcessorOptions,
  type ResolvedOptions,
  resolveOptions,
} from "./options.ts";
import { getQueueOptionsToken, getSharedConfigToken, LAMBDA_QUEUE_TOKEN, metadataKeys } from "./tokens.ts";
import { attachWorker, WorkerHost } from "./worker-host.ts";

/** One processor found in the application: what a Worker for it needs, and how to hook one up. */
export interface ProcessorRegistration {
  queueName: string;
  host: WorkerHost;
  autorun: boolean;
  /** The queue's redis, prefix and events level under the @Processor's worker options. */
  workerOptions: ResolvedOptions<Omit<NestWorkerOptions, "autorun">>;
  processor: Processor;
  /** Gives the processor this worker and subscribes its @OnWorkerEvent methods. */
  attach(worker: Worker): void;
}

type Listener = (...args: unknown[]) => unknown;

export class NimbusqExplorer implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger("NimbusqModule");
  private readonly registrations: ProcessorRegistration[] = [];
  private readonly workers = new Set<Worker>();
  private lambdaQueue: string | undefined;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    this.lambdaQueue = this.lookup<string>(LAMBDA_QUEUE_TOKEN);
    for (const wrapper of this.discovery.getProviders()) {
      // Factory and value providers have no useful metatype: their instance's class carries the metadata.
      const type = !wrapper.metatype || wrapper.inject ? wrapper.instance?.constructor : wrapper.metatype;
      if (typeof type !== "function") continue;
      const meta = this.reflector.get<ProcessorOptions | undefined>(metadataKeys.processor, type);
      if (!meta) continue;
      if (!wrapper.isDependencyTreeStatic())
        throw new Error(`${type.name}: request-scoped or transient processors are not supported`);
      const instance: unknown = wrapper.instance;
      if (!(instance instanceof WorkerHost))
        throw new Error(`${type.name} is a @Processor("${meta.name}") but does not extend WorkerHost`);
      const options = this.reflector.get<NestWorkerOptions | undefined>(metadataKeys.workerOptions, type);
      const registration = this.register(instance, meta, options ?? {});
      this.registrations.push(registration);
      if (this.lambdaQueue === undefined)
        registration.attach(new Worker(meta.name, registration.processor, registration.workerOptions));
    }
  }

  onApplicationBootstrap(): void {
    if (this.lambdaQueue !== undefined) return;
    for (const { host, autorun, queueName } of this.registrations) {
      if (!autorun) continue;
      host.worker.run().catch((error: unknown) => {
        this.logger.error(`worker "${queueName}" stopped: ${describe(error)}`, stackOf(error));
      });
    }
  }

  /** Workers close before the queues do (their onApplicationShutdown): jobs finish or go back to wait. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.workers].map((worker) => worker.close()));
  }

  /** The one processor of `queueName` (nestWorkerHandler's). */
  processorFor(queueName: string): ProcessorRegistration {
    const found = this.registrations.filter((r) => r.queueName === queueName);
    if (found.length === 1 && found[0]) return found[0];
    const names = this.registrations.map((r) => `"${r.queueName}"`).join(", ") || "none";
    throw new Error(
      found.length === 0
        ? `no @Processor("${queueName}") in the application (processors found: ${names})`
        : `${found.length} processors for queue "${queueName}"; nestWorkerHandler runs exactly one`,
    );
  }

  private register(
    host: WorkerHost,
    meta: ProcessorOptions,
    options: NestWorkerOptions,
  ): ProcessorRegistration {
    const { autorun = true, ...workerOptions } = options;
    const context = `@Processor("${meta.name}")`;
    const queue =
      this.lookup<ResolvedOptions<NimbusqRootOptions>>(getQueueOptionsToken(meta.name)) ??
      this.lookup<ResolvedOptions<NimbusqRootOptions>>(getSharedConfigToken(meta.configKey));
    // Only what a worker shares with its queue: where it lives and which events it writes.
    const base = queue && { redis: queue.redis, prefix: queue.prefix, events: queue.events };
    return {
      queueName: meta.name,
      host,
      autorun,
      workerOptions: resolveOptions(workerOptions, base, context),
      processor: (job: ActiveJob) => host.process(job, job.token),
      attach: (worker) => {
        attachWorker(host, worker);
        this.workers.add(worker);
        this.subscribe(host, meta.name, worker);
      },
    };
  }

  private subscribe(host: WorkerHost, queueName: string, worker: Worker): void {
    const prototype = Object.getPrototypeOf(host) as Record<string, unknown>;
    let hasErrorListener = false;
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      const listener = prototype[method];
      if (typeof listener !== "function") continue;
      const meta = this.reflector.get<OnWorkerEventMetadata | undefined>(metadataKeys.workerEvent, listener);
      if (!meta) continue;
      if (meta.eventName === "error") hasErrorListener = true;
      const where = `${host.constructor.name}.${method} (@OnWorkerEvent("${meta.eventName}"))`;
      worker.on(
        meta.eventName,
        this.guarded(where, (listener as Listener).bind(host)) as WorkerEvents["active"],
      );
    }
    if (!hasErrorListener)
      worker.on("error", (error) =>
        this.logger.error(`worker "${queueName}": ${describe(error)}`, stackOf(error)),
      );
  }

  /** A listener is a notification after the fact: what it throws is logged, never passed on. */
  private guarded(where: string, listener: Listener): Listener {
    const report = (error: unknown) =>
      this.logger.error(`${where} threw: ${describe(error)}`, stackOf(error));
    return (...args) => {
      try {
        const result = listener(...args);
        if (result instanceof Promise) result.catch(report);
      } catch (error) {
        report(error);
      }
    };
  }

  private lookup<T>(token: string): T | undefined {
    try {
      return this.moduleRef.get<T>(token, { strict: false });
    } catch {
      return undefined;
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function stackOf(error: unknown): string | undefined {
  return error instanceof Error ? error.stack : undefined;
}
