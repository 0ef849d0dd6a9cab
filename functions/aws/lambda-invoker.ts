/**
 * Asynchronous Lambda invocations (InvocationType "Event") through the AWS SDK v3 client, loaded only
 * when the first invocation happens so a cold start that never chains pays nothing for it.
 */
import type { LambdaClient } from "@aws-sdk/client-lambda";

/** Invokes a function asynchronously with a JSON payload. */
export type Invoke = (functionName: string, payload: unknown) => Promise<void>;

export interface LambdaInvokerOptions {
  /** A ready client (tests point one at a local recorder); created from the environment otherwise. */
  client?: LambdaClient;
  /** Client settings when nimbusq creates it, e.g. `{ endpoint }` for a local stand-in. */
  clientConfig?: ConstructorParameters<typeof LambdaClient>[0];
}

export function createLambdaInvoker(options: LambdaInvokerOptions = {}): Invoke {
  let client: LambdaClient | undefined = options.client;
  return async (functionName, payload) => {
    const sdk = await import("@aws-sdk/client-lambda");
    client ??= new sdk.LambdaClient(options.clientConfig ?? {});
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
