/**
 * nimbusq's Lambda handler factories: the worker, the sweeper, the HTTP API and the producer triggers,
 * and the readers that configure them from the environment (functions/config/, as the entries in
 * functions/entries and the demo in examples/demo use them).
 *
 * @example
 * import { workerHandler } from "nimbusq/functions";
 * export const handler = workerHandler({ queue: "email", processor: sendEmail, batchSize: 25 });
 */

export { createEventPublisher, type EventPublisherOptions, type Publish } from "./aws/event-publisher.ts";
export { createLambdaInvoker, type Invoke, type LambdaInvokerOptions } from "./aws/lambda-invoker.ts";
export { httpEnvWithSecrets, httpOptionsFromEnv } from "./config/http-env.ts";
export { prefixFromEnv } from "./config/prefix-env.ts";
export { envWithSecrets, forgetSecrets, type SecretOptions, secretFromEnv } from "./config/secrets.ts";
export { type SweeperEnvOptions, sweeperOptionsFromEnv } from "./config/sweeper-env.ts";
export { workerKickFromEnv, workersFromEnv } from "./config/workers-env.ts";
export {
  type ApiToken,
  createHttpApp,
  type HttpLambdaHandler,
  type HttpOptions,
  httpHandler,
  openApiDocument,
} from "./http/index.ts";
export * from "./producers/index.ts";
export {
  eventEntry,
  type SweeperOptions,
  type SweeperResult,
  type SweptQueue,
  sweeperHandler,
} from "./sweeper.ts";
export {
  type WorkerEvent,
  type WorkerHandlerOptions,
  type WorkerHandlerResult,
  workerHandler,
} from "./worker.ts";
