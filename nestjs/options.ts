/**
 * The options of NimbusqModule, @Processor and their resolution: a shared configuration (forRoot),
 * merged under each queue's, flow producer's and worker's own, and one Redis client per configuration.
 */
import type { FactoryProvider, ModuleMetadata, Provider, Type } from "@nestjs/common";
import {
  createRedis,
  type FlowProducerOptions,
  isTcpUrl,
  type QueueOptions,
  type RedisOption,
  ValidationError,
  type WorkerOptions,
} from "../core/index.ts";

/**
 * Where Redis is: a client (`redis`, e.g. `createRedis()`), the REST `url` and `token`, or a
 * `redis://` / `rediss://` `url` alone for Redis over TCP (`cluster: true` for Redis Cluster); with
 * none, `UPSTASH_REDIS_REST_URL` / `UPSTASH_REDIS_REST_TOKEN`. Replaces BullMQ's `connection`.
 */
export interface NimbusqConnection {
  /** A client, or a ShardMap placing each queue on one of several databases. */
  redis?: RedisOption;
  url?: string;
  token?: string;
  /** With a redis:// url: the url is one node of a Redis Cluster. */
  cluster?: boolean;
}

/** `NimbusqModule.forRoot`: the defaults of every queue, flow producer and worker (BullMQ's QueueOptions). */
export interface NimbusqRootOptions extends NimbusqConnection, Partial<Omit<QueueOptions, "redis">> {}

export interface NimbusqOptionsFactory {
  createSharedConfiguration(): Promise<NimbusqRootOptions> | NimbusqRootOptions;
}

/** `NimbusqModule.forRootAsync`: the shared configuration from a factory or a class, e.g. a ConfigService. */
export interface NimbusqRootAsyncOptions extends Pick<ModuleMetadata, "imports"> {
  useFactory?: (...args: never[]) => Promise<NimbusqRootOptions> | NimbusqRootOptions;
  inject?: FactoryProvider["inject"];
  useClass?: Type<NimbusqOptionsFactory>;
  useExisting?: Type<NimbusqOptionsFactory>;
  extraProviders?: Provider[];
}

/** `NimbusqModule.registerQueue`: one queue; unset fields come from the shared configuration. */
export interface RegisterQueueOptions extends NimbusqRootOptions {
  /** The queue's name (default "default"). */
  name?: string;
  /** Which `forRoot(configKey, …)` configuration to start from (default: the unnamed one). */
  configKey?: string;
}

/** `NimbusqModule.registerFlowProducer`. */
export interface RegisterFlowProducerOptions
  extends NimbusqConnection,
    Partial<Omit<FlowProducerOptions, "redis">> {
  name?: string;
  configKey?: string;
}

/**
 * `@Processor(name, workerOptions)`: nimbusq's WorkerOptions, plus `autorun` (default true: the worker
 * runs while the application lives; false: call `this.worker.run()` yourself).
 */
export interface NestWorkerOptions extends NimbusqConnection, Partial<Omit<WorkerOptions, "redis">> {
  autorun?: boolean;
}

/** `@Processor({ name, configKey })`. */
export interface ProcessorOptions {
  name: string;
  configKey?: string;
}

/** A configuration with its Redis client made. */
export type ResolvedOptions<T> = Omit<T, "url" | "token" | "redis"> & { redis: RedisOption };

/**
 * Lays `own` over `shared`; the client is `own`'s (its `redis`, or one made from its url/token),
 * else the shared one, else one made from the environment.
 */
export function resolveOptions<T extends NimbusqConnection>(
  own: T,
  shared: ResolvedOptions<NimbusqRootOptions> | undefined,
  context: string,
): ResolvedOptions<T> {
  if ("connection" in own)
    throw new ValidationError("connection", "replaced by redis (createRedis()) or url and token", context);
  const { url, token, redis, cluster, ...rest } = own;
  const tcp = isTcpUrl(url);
  if (tcp && token !== undefined)
    throw new ValidationError("token", "not with a redis:// url (put the password in the url)", context);
  if (!tcp && cluster !== undefined)
    throw new ValidationError("cluster", "only with a redis:// or rediss:// url", context);
  if (!tcp && (url === undefined) !== (token === undefined))
    throw url === undefined
      ? new ValidationError("url", "given together with token", context)
      : new ValidationError("token", "given together with url", context);
  // createRedis picks the transport from the url: redis:// or rediss:// is TCP, else Upstash's REST API.
  const made = () =>
    tcp
      ? createRedis({ url, cluster: cluster === true })
      : url !== undefined
        ? createRedis({ url, token })
        : undefined;
  const client = redis ?? made() ?? shared?.redis ?? createRedis();
  return { ...shared, ...rest, redis: client } as ResolvedOptions<T>;
}
