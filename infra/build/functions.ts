/**
 * The Lambda functions serverless.yml deploys, one bundle each. The names match serverless.yml:
 * function `<name>` runs `build/lambda/<name>/index.handler`. The HTTP API and the sweeper are
 * nimbusq's own entries, configured from the environment alone (functions/entries/); the workers and
 * the SQS producer carry the demo's code, so they come from examples/demo/entries/ — none of them
 * is in the package.
 */
export interface FunctionEntry {
  /** The function's key in serverless.yml and its folder under the output directory. */
  name: string;
  /** The entry module, relative to the repository root. */
  entry: string;
}

export const functionEntries: readonly FunctionEntry[] = [
  { name: "http", entry: "functions/entries/http.ts" },
  { name: "sweeper", entry: "functions/entries/sweeper.ts" },
  { name: "email-worker", entry: "examples/demo/entries/email-worker.ts" },
  { name: "report-worker", entry: "examples/demo/entries/report-worker.ts" },
  { name: "sqs-email-producer", entry: "examples/demo/entries/sqs-email-producer.ts" },
];

/** Left to the Lambda runtime, which ships the AWS SDK v3: bundling it would add ~0.5 MB per client. */
export const runtimeProvided = ["@aws-sdk/*"];
