/**
 * The decorators, named and shaped as @nestjs/bullmq's. They are written as functions that apply
 * Nest's own decorators, so this library compiles without `experimentalDecorators`; users apply them
 * as legacy decorators (tsc with `emitDecoratorMetadata`, as Nest apps are built).
 */
import { Inject, SetMetadata } from "@nestjs/common";
import { ValidationError, type WorkerEvents } from "../core/index.ts";
import type { NestWorkerOptions, ProcessorOptions } from "./options.ts";
import { getFlowProducerToken, getQueueToken, metadataKeys } from "./tokens.ts";

/** Injects the `Queue` registered with `NimbusqModule.registerQueue({ name })`. */
export const InjectQueue = (name?: string): ReturnType<typeof Inject> => Inject(getQueueToken(name));

/** Injects the `FlowProducer` registered with `NimbusqModule.registerFlowProducer({ name })`. */
export const InjectFlowProducer = (name?: string): ReturnType<typeof Inject> =>
  Inject(getFlowProducerToken(name));

/** The worker events a processor's methods can listen to (`@OnWorkerEvent("completed")`). */
export type WorkerEventName = keyof WorkerEvents;

export interface OnWorkerEventMetadata {
  eventName: WorkerEventName;
}

const workerEventNames: readonly WorkerEventName[] = [
  "active",
  "progress",
  "completed",
  "failed",
  "stalled",
  "drained",
  "error",
];

/**
 * Subscribes the method to its processor's worker event. Listeners are notifications after the fact:
 * one that throws or rejects is logged and changes nothing about the job.
 */
export function OnWorkerEvent(eventName: WorkerEventName): MethodDecorator {
  if (!workerEventNames.includes(eventName))
    throw new ValidationError("eventName", `one of ${workerEventNames.join(", ")}`, "OnWorkerEvent");
  return SetMetadata(metadataKeys.workerEvent, { eventName } satisfies OnWorkerEventMetadata);
}

/**
 * Marks a class extending WorkerHost as the processor of a queue; `workerOptions` are the worker's
 * (concurrency, batchSize, limiter, autorun…), laid over the queue's registration and forRoot.
 *
 * @example
 * @Processor("email", { concurrency: 10 })
 * export class EmailProcessor extends WorkerHost { async process(job: ActiveJob) { … } }
 */
export function Processor(
  queueNameOrOptions: string | ProcessorOptions,
  workerOptions?: NestWorkerOptions,
): ClassDecorator {
  const options = typeof queueNameOrOptions === "string" ? { name: queueNameOrOptions } : queueNameOrOptions;
  if (typeof options?.name !== "string" || options.name === "")
    throw new ValidationError("name", "a queue name (a non-empty string)", "Processor");
  return (target) => {
    SetMetadata(metadataKeys.processor, options)(target);
    if (workerOptions) SetMetadata(metadataKeys.workerOptions, workerOptions)(target);
  };
}
