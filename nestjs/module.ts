/**
 * NimbusqModule: @nestjs/bullmq's BullModule for nimbusq. `forRoot`/`forRootAsync` register the shared
 * configuration (global), `registerQueue`/`registerFlowProducer` provide `Queue`s and `FlowProducer`s
 * for `@InjectQueue`/`@InjectFlowProducer`, and every form brings in the explorer that runs @Processor
 * classes.
 */
import { type DynamicModule, Module, type Provider } from "@nestjs/common";
import { DiscoveryModule, DiscoveryService, MetadataScanner, ModuleRef, Reflector } from "@nestjs/core";
import { FlowProducer, Queue } from "../core/index.ts";
import { NimbusqExplorer } from "./explorer.ts";
import {
  type NimbusqOptionsFactory,
  type NimbusqRootAsyncOptions,
  type NimbusqRootOptions,
  type RegisterFlowProducerOptions,
  type RegisterQueueOptions,
  type ResolvedOptions,
  resolveOptions,
} from "./options.ts";
import {
  getFlowProducerOptionsToken,
  getFlowProducerToken,
  getQueueOptionsToken,
  getQueueToken,
  getSharedConfigToken,
} from "./tokens.ts";

class NimbusqCoreModule {}
Module({})(NimbusqCoreModule);

/** One explorer per application, however many times the module is imported. */
const coreModule: DynamicModule = {
  global: true,
  module: NimbusqCoreModule,
  imports: [DiscoveryModule],
  providers: [
    {
      provide: NimbusqExplorer,
      useFactory: (moduleRef: ModuleRef, discovery: DiscoveryService, scanner: MetadataScanner) =>
        new NimbusqExplorer(moduleRef, discovery, scanner, new Reflector()),
      inject: [ModuleRef, DiscoveryService, MetadataScanner],
    },
  ],
  exports: [NimbusqExplorer],
};

type Shared = ResolvedOptions<NimbusqRootOptions>;

/** Closed by Nest in onApplicationShutdown, after the workers (beforeApplicationShutdown). */
function closedOnShutdown<T extends { close(): Promise<void> }>(instance: T): T {
  return Object.assign(instance, { onApplicationShutdown: () => instance.close() });
}

/** The shared configuration a registration starts from: its configKey's, which must exist if named. */
function sharedInject(configKey: string | undefined) {
  return [{ token: getSharedConfigToken(configKey), optional: true }];
}

function checkShared(shared: Shared | undefined, configKey: string | undefined, context: string): void {
  if (configKey !== undefined && !shared)
    throw new Error(`${context}: configKey "${configKey}" has no NimbusqModule.forRoot("${configKey}", …)`);
}

// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; forRoot and register* are its static factories
export class NimbusqModule {
  /**
   * The configuration every queue, flow producer and processor starts from (global).
   *
   * @example
   * NimbusqModule.forRoot({ url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN, prefix: "bull" })
   */
  static forRoot(options: NimbusqRootOptions): DynamicModule;
  static forRoot(configKey: string, options: NimbusqRootOptions): DynamicModule;
  static forRoot(
    keyOrOptions: string | NimbusqRootOptions,
    maybeOptions?: NimbusqRootOptions,
  ): DynamicModule {
    const [configKey, options] =
      typeof keyOrOptions === "string" ? [keyOrOptions, maybeOptions ?? {}] : [undefined, keyOrOptions];
    const provider: Provider = {
      provide: getSharedConfigToken(configKey),
      useFactory: () => resolveOptions(options, undefined, "NimbusqModule.forRoot"),
    };
    return {
      global: true,
      module: NimbusqModule,
      imports: [coreModule],
      providers: [provider],
      exports: [provider],
    };
  }

  /** forRoot from a factory (`useFactory` + `inject`) or a class with `createSharedConfiguration()`. */
  static forRootAsync(options: NimbusqRootAsyncOptions): DynamicModule;
  static forRootAsync(configKey: string, options: NimbusqRootAsyncOptions): DynamicModule;
  static forRootAsync(
    keyOrOptions: string | NimbusqRootAsyncOptions,
    maybeOptions?: NimbusqRootAsyncOptions,
  ): DynamicModule {
    const [configKey, options] =
      typeof keyOrOptions === "string" ? [keyOrOptions, maybeOptions ?? {}] : [undefined, keyOrOptions];
    const context = "NimbusqModule.forRootAsync";
    const token = getSharedConfigToken(configKey);
    const providers: Provider[] = [];
    const factoryClass = options.useClass ?? options.useExisting;
    if (options.useFactory) {
      const factory = options.useFactory as (...args: unknown[]) => Promise<NimbusqRootOptions>;
      providers.push({
        provide: token,
        useFactory: async (...args: unknown[]) => resolveOptions(await factory(...args), undefined, context),
        inject: options.inject ?? [],
      });
    } else if (factoryClass) {
      providers.push({
        provide: token,
        useFactory: async (factory: NimbusqOptionsFactory) =>
          resolveOptions(await factory.createSharedConfiguration(), undefined, context),
        inject: [factoryClass],
      });
      if (options.useClass) providers.push({ provide: options.useClass, useClass: options.useClass });
    } else {
      throw new Error(`${context}: one of useFactory, useClass or useExisting is required`);
    }
    return {
      global: true,
      module: NimbusqModule,
      imports: [...(options.imports ?? []), coreModule],
      providers: [...providers, ...(options.extraProviders ?? [])],
      exports: [token],
    };
  }

  /** Provides a `Queue` per entry, for `@InjectQueue(name)`; unset options come from forRoot. */
  static registerQueue(...queues: RegisterQueueOptions[]): DynamicModule {
    const providers = queues.flatMap(({ name = "default", configKey, ...own }): Provider[] => [
      {
        provide: getQueueOptionsToken(name),
        useFactory: (shared: Shared | undefined) => {
          const context = `NimbusqModule.registerQueue("${name}")`;
          checkShared(shared, configKey, context);
          return resolveOptions(own, shared, context);
        },
        inject: sharedInject(configKey),
      },
      {
        provide: getQueueToken(name),
        useFactory: (options: ResolvedOptions<RegisterQueueOptions>) =>
          closedOnShutdown(new Queue(name, options)),
        inject: [getQueueOptionsToken(name)],
      },
    ]);
    const exported = queues.map(({ name }) => getQueueToken(name ?? "default"));
    return { module: NimbusqModule, imports: [coreModule], providers, exports: exported };
  }

  /** Provides a `FlowProducer` per entry, for `@InjectFlowProducer(name)`. */
  static registerFlowProducer(...producers: RegisterFlowProducerOptions[]): DynamicModule {
    const providers = producers.flatMap(({ name = "default", configKey, ...own }): Provider[] => [
      {
        provide: getFlowProducerOptionsToken(name),
        useFactory: (shared: Shared | undefined) => {
          const context = `NimbusqModule.registerFlowProducer("${name}")`;
          checkShared(shared, configKey, context);
          const { defaultJobOptions: _, ...base } = shared ?? ({} as Partial<Shared>);
          return resolveOptions(own, shared && { ...base, redis: shared.redis }, context);
        },
        inject: sharedInject(configKey),
      },
      {
        provide: getFlowProducerToken(name),
        useFactory: (options: ResolvedOptions<RegisterFlowProducerOptions>) =>
          closedOnShutdown(new FlowProducer(options)),
        inject: [getFlowProducerOptionsToken(name)],
      },
    ]);
    const exported = producers.map(({ name }) => getFlowProducerToken(name ?? "default"));
    return { module: NimbusqModule, imports: [coreModule], providers, exports: exported };
  }
}
Module({})(NimbusqModule);
