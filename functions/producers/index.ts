/**
 * Producer triggers: Lambda handlers that turn SQS, S3, DynamoDB stream, EventBridge and SNS events
 * into jobs, with ids derived from each record so a redelivered record never makes a second job.
 */
export { type DynamodbStreamProducerOptions, dynamodbStreamProducer } from "./dynamodb-stream.ts";
export type { MapRecord, MapResult, ProducerJob } from "./enqueue-records.ts";
export { type EventBridgeProducerOptions, eventBridgeProducer } from "./event-bridge.ts";
export type { ProducerOptions } from "./producer-options.ts";
export { type FailedRecord, type InvalidRecord, RecordsFailedError } from "./record-failures.ts";
export { type S3ProducerOptions, s3ObjectKey, s3Producer } from "./s3.ts";
export { type SnsProducerOptions, snsProducer } from "./sns.ts";
export { type SqsProducerOptions, sqsProducer } from "./sqs.ts";
