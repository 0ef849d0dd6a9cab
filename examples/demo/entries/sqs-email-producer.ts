/**
 * Lambda entry of the SQS producer example: each message body `{ "to": "…", "subject": "…" }` becomes a
 * `send` job on the demo `email` queue (job id `sqs-<messageId>`, so a redelivery adds nothing). A
 * message that is not such JSON is reported as failed; after the queue's maxReceiveCount it goes to
 * the dead-letter queue.
 */
import type { SQSRecord } from "aws-lambda";
import { prefixFromEnv, sqsProducer } from "../../../functions/index.ts";
import { demoQueue } from "../demo-queues.ts";

const email = demoQueue("email");
const prefix = prefixFromEnv();

export function emailJob(record: SQSRecord) {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    // JSON.parse's message quotes the body; say what is wrong without it.
    body = undefined;
  }
  const { to, subject } = (body ?? {}) as { to?: unknown; subject?: unknown };
  if (typeof to !== "string" || to === "" || typeof subject !== "string") {
    throw new TypeError(
      `SQS message ${record.messageId}: the body must be JSON { "to": string, "subject": string }`,
    );
  }
  return { name: "send", data: { to, subject }, opts: email.defaultJobOptions };
}

export const handler = sqsProducer({
  queue: email.name,
  ...(prefix ? { prefix } : {}),
  map: emailJob,
});
