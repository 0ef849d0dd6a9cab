/**
 * nimbusq for NestJS: the `@nestjs/bullmq` way of writing queues and processors, on nimbusq. Processors
 * run in a long-lived app (autorun, closed cleanly by `app.close()`) or as a worker Lambda
 * (`nestWorkerHandler`). See docs/nestjs.md for the migration table.
 *
 * @example
 * import { NimbusqModule, Processor, WorkerHost } from "nimbusq/nestjs";
 * @Module({ imports: [NimbusqModule.forRoot({ prefix: "bull" }), NimbusqModule.registerQueue({ name: "email" })], providers: [EmailProcessor] })
 * export class AppModule {}
 */
export {
  InjectFlowProducer,
  InjectQueue,
  OnWorkerEvent,
  type OnWorkerEventMetadata,
  Processor,
  type WorkerEventName,
} from "./decorators.ts";
export { NimbusqExplorer, type ProcessorRegistration } from "./explorer.ts";
export { type NestWorkerHandler, type NestWorkerHandlerOptions, nestWorkerHandler } from "./lambda.ts";
export { NimbusqModule } from "./module.ts";
export type {
  NestWorkerOptions,
  NimbusqConnection,
  NimbusqOptionsFactory,
  NimbusqRootAsyncOptions,
  NimbusqRootOptions,
  ProcessorOptions,
  RegisterFlowProducerOptions,
  RegisterQueueOptions,
} from "./options.ts";
export {
  getFlowProducerOptionsToken,
  getFlowProducerToken,
  getQueueOptionsToken,
  getQueueToken,
  getSharedConfigToken,
  NIMBUSQ_CONFIG_DEFAULT_TOKEN,
} from "./tokens.ts";
export { WorkerHost } from "./worker-host.ts";
