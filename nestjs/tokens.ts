/**
 * Injection tokens and metadata keys. The helpers are named as @nestjs/bullmq's; the token strings
 * differ (`Nimbusq…`), so an app moving one queue at a time can hold both modules without collisions.
 */

/** The token of the shared configuration registered without a config key. */
export const NIMBUSQ_CONFIG_DEFAULT_TOKEN = "NIMBUSQ_CONFIG(default)";

/** The token under which `NimbusqModule.registerQueue({ name })` provides the `Queue`. */
export function getQueueToken(name?: string): string {
  return name ? `NimbusqQueue_${name}` : "NimbusqQueue_default";
}

/** The token of a registered queue's resolved options (shared configuration merged under its own). */
export function getQueueOptionsToken(name?: string): string {
  return name ? `NimbusqQueueOptions_${name}` : "NimbusqQueueOptions_default";
}

/** The token under which `NimbusqModule.registerFlowProducer({ name })` provides the `FlowProducer`. */
export function getFlowProducerToken(name?: string): string {
  return name ? `NimbusqFlowProducer_${name}` : "NimbusqFlowProducer_default";
}

/** The token of a registered flow producer's resolved options. */
export function getFlowProducerOptionsToken(name?: string): string {
  return name ? `NimbusqFlowProducerOptions_${name}` : "NimbusqFlowProducerOptions_default";
}

/** The token of the shared configuration `forRoot(configKey, …)` registers. */
export function getSharedConfigToken(configKey?: string): string {
  return configKey ? `NIMBUSQ_CONFIG(${configKey})` : NIMBUSQ_CONFIG_DEFAULT_TOKEN;
}

/** Metadata keys the decorators write and the explorer reads. */
export const metadataKeys = {
  processor: "nimbusq:processor",
  workerOptions: "nimbusq:worker-options",
  workerEvent: "nimbusq:worker-event",
} as const;

/** Present (its value the queue name) only in an application context booted by `nestWorkerHandler`. */
export const LAMBDA_QUEUE_TOKEN = "NIMBUSQ_LAMBDA_QUEUE";
