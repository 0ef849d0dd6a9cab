/**
 * Asynchronous Lambda invocations (InvocationType "Event") through the AWS SDK v3 client, loaded only
 * when the first invocation happens so a cold start that never chains pays nothing for it.
 */
import type { LambdaClient, LambdaClientConfig } from "@aws-sdk/client-lambda";
import type { SweptQueue } from "../../core/index.ts";

// The exported types name no AWS SDK type: the SDK is an optional peer of the package (the Lambda
// runtime ships it), and a .d.ts that imported it would not compile where it is absent.

/** A Lambda client: the SDK's `LambdaClient` (nimbusq only calls its `send`). */
export interface LambdaClientLike {
  send(command: never): Promise<unknown>;
}

/** Invokes a function asynchronously with a JSON payload. */
export type Invoke = (functionName: string, payload: unknown) => Promise<void>;

export interface LambdaInvokerOptions {
  /** A ready client (tests point one at a local recorder); created from the environment otherwise. */
  client?: LambdaClientLike;
  /** Client settings when nimbusq creates it (`LambdaClientConfig`, e.g. `{ endpoint }` for a local stand-in). */
  clientConfig?: Record<string, unknown>;
}

export function createLambdaInvoker(options: LambdaInvokerOptions = {}): Invoke {
  let client = options.client as LambdaClient | undefined;
  return async (functionName, payload) => {
    const sdk = await import("@aws-sdk/client-lambda");
    client ??= new sdk.LambdaClient((options.clientConfig ?? {}) as LambdaClientConfig);
    const result = await client.send(
      new sdk.InvokeCommand({
        FunctionName: functionName,
        InvocationType: "Event",
        Payload: new TextEncoder().encode(JSON.stringify(payload)),
      }),
    );
    if (result.StatusCode !== 202) {
      throw new Error(`asynchronous invoke of ${functionName} answered ${result.StatusCode}, expected 202`);
    }
  };
}

/**
 * The sweeper's `startWorkers` port: `count` asynchronous invocations of the queue's worker function,
 * each with `{ queue, reason: "sweeper" }` (the default invoker loads the SDK on the first start).
 */
export function workerStarter(invoke: Invoke = createLambdaInvoker()) {
  return (queue: SweptQueue, count: number) => {
    const payload = { queue: queue.name, reason: "sweeper" };
    return Promise.all(Array.from({ length: count }, () => invoke(queue.workerFunction as string, payload)));
  };
}
