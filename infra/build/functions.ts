/**
 * The Lambda functions nimbusq deploys, one bundle each. The names match serverless.yml: function
 * `<name>` runs `build/lambda/<name>/index.handler`.
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
  { name: "email-worker", entry: "functions/entries/email-worker.ts" },
  { name: "report-worker", entry: "functions/entries/report-worker.ts" },
  { name: "sqs-email-producer", entry: "functions/entries/sqs-email-producer.ts" },
];

/** Left to the Lambda runtime, which ships the AWS SDK v3: bundling it would add ~0.5 MB per client. */
export const runtimeProvided = ["@aws-sdk/*"];
