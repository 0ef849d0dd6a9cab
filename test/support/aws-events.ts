/**
 * Lambda events and context for handler tests, shaped as the AWS docs show them and typed with
 * `@types/aws-lambda`. Ids, sequence numbers and receipts are fresh per call unless a test fixes them,
 * so a test that wants a redelivery sends the same event object twice.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type {
  APIGatewayProxyEventV2,
  AttributeValue,
  Context,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  EventBridgeEvent,
  S3Event,
  S3EventRecord,
  SNSEvent,
  SNSEventRecord,
  SNSMessageAttributes,
  SQSEvent,
  SQSMessageAttributes,
  SQSRecord,
  SQSRecordAttributes,
} from "aws-lambda";

/** A Lambda context whose remaining time counts down from `remainingMs`. */
export function lambdaContext({ remainingMs = 30000, functionName = "fn" } = {}): Context {
  const end = Date.now() + remainingMs;
  const fail = () => {
    throw new Error("deprecated Context callbacks are not used by nimbusq");
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `2026/01/01/[$LATEST]${randomBytes(16).toString("hex")}`,
    getRemainingTimeInMillis: () => Math.max(0, end - Date.now()),
    done: fail,
    fail,
    succeed: fail,
  };
}

// --- Producer trigger events: SQS, S3, DynamoDB streams, EventBridge, SNS (shapes from the AWS docs) ---

const region = "us-east-1";
const account = "123456789012";
let sequence = 0;

/** Increasing, as SQS FIFO and DynamoDB sequence numbers are within a batch. */
function nextSequence(): string {
  sequence += 1;
  return `4960000000000000${String(sequence).padStart(8, "0")}`;
}

export interface SqsRecordInit {
  body: string;
  messageId?: string;
  /** Defaults to a standard queue's ARN; a name ending in `.fifo` makes a FIFO record. */
  queueName?: string;
  /** FIFO only. */
  messageGroupId?: string;
  messageAttributes?: SQSMessageAttributes;
  receiveCount?: number;
}

export function sqsEvent(records: SqsRecordInit[]): SQSEvent {
  return {
    Records: records.map((init): SQSRecord => {
      const queueName = init.queueName ?? "jobs";
      const fifo = queueName.endsWith(".fifo");
      const sent = Date.now() - 1000;
      const attributes: SQSRecordAttributes = {
        ApproximateReceiveCount: String(init.receiveCount ?? 1),
        SentTimestamp: String(sent),
        SenderId: "AIDAIENQZJOLO23YVJ4VO",
        ApproximateFirstReceiveTimestamp: String(sent + 5),
      };
      if (fifo) {
        attributes.SequenceNumber = nextSequence();
        attributes.MessageGroupId = init.messageGroupId ?? "group-1";
        attributes.MessageDeduplicationId = createHash("sha256").update(init.body).digest("hex");
      }
      return {
        messageId: init.messageId ?? randomUUID(),
        receiptHandle: `AQEB${randomBytes(48).toString("base64")}`,
        body: init.body,
        attributes,
        messageAttributes: init.messageAttributes ?? {},
        md5OfBody: createHash("md5").update(init.body).digest("hex"),
        eventSource: "aws:sqs",
        eventSourceARN: `arn:aws:sqs:${region}:${account}:${queueName}`,
        awsRegion: region,
      };
    }),
  };
}

export interface S3RecordInit {
  bucket: string;
  /** As S3 sends it: URL-encoded, `+` for spaces. */
  key: string;
  eventName?: string;
  versionId?: string;
  /** `null` leaves it out, as events other than PUT and DELETE do. */
  sequencer?: string | null;
  size?: number;
  eventTime?: string;
}

export function s3Event(records: S3RecordInit[]): S3Event {
  return {
    Records: records.map((init): S3EventRecord => {
      const sequencer =
        init.sequencer === undefined ? randomBytes(9).toString("hex").toUpperCase() : init.sequencer;
      const object: Record<string, unknown> = {
        key: init.key,
        size: init.size ?? 1024,
        eTag: randomBytes(16).toString("hex"),
      };
      if (init.versionId !== undefined) object.versionId = init.versionId;
      if (sequencer !== null) object.sequencer = sequencer;
      return {
        eventVersion: "2.1",
        eventSource: "aws:s3",
        awsRegion: region,
        eventTime: init.eventTime ?? new Date().toISOString(),
        eventName: init.eventName ?? "ObjectCreated:Put",
        userIdentity: { principalId: "AWS:AIDAINPONIXQXHT3IKHL2" },
        requestParameters: { sourceIPAddress: "203.0.113.10" },
        responseElements: {
          "x-amz-request-id": randomBytes(8).toString("hex").toUpperCase(),
          "x-amz-id-2": randomBytes(48).toString("base64"),
        },
        s3: {
          s3SchemaVersion: "1.0",
          configurationId: "nimbusq-producer",
          bucket: {
            name: init.bucket,
            ownerIdentity: { principalId: "A3NL1KOZZKExample" },
            arn: `arn:aws:s3:::${init.bucket}`,
          },
          object: object as S3EventRecord["s3"]["object"],
        },
      };
    }),
  };
}

export interface DynamodbRecordInit {
  keys: Record<string, AttributeValue>;
  eventName?: "INSERT" | "MODIFY" | "REMOVE";
  newImage?: Record<string, AttributeValue>;
  oldImage?: Record<string, AttributeValue>;
  /** `null` leaves it out. */
  eventID?: string | null;
  sequenceNumber?: string;
  tableName?: string;
}

export function dynamodbStreamEvent(records: DynamodbRecordInit[]): DynamoDBStreamEvent {
  return {
    Records: records.map((init): DynamoDBRecord => {
      const eventName = init.eventName ?? "INSERT";
      const record: DynamoDBRecord = {
        eventName,
        eventVersion: "1.1",
        eventSource: "aws:dynamodb",
        awsRegion: region,
        dynamodb: {
          ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
          Keys: init.keys,
          SequenceNumber: init.sequenceNumber ?? nextSequence(),
          SizeBytes: 59,
          StreamViewType: "NEW_AND_OLD_IMAGES",
          ...(init.newImage ? { NewImage: init.newImage } : {}),
          ...(init.oldImage ? { OldImage: init.oldImage } : {}),
        },
        eventSourceARN: `arn:aws:dynamodb:${region}:${account}:table/${init.tableName ?? "Orders"}/stream/2026-01-01T00:00:00.000`,
      };
      if (init.eventID !== null) record.eventID = init.eventID ?? randomBytes(16).toString("hex");
      return record;
    }),
  };
}

export interface EventBridgeEventInit<TDetail> {
  detail: TDetail;
  detailType?: string;
  source?: string;
  id?: string;
  replayName?: string;
}

export function eventBridgeEvent<TDetail>(
  init: EventBridgeEventInit<TDetail>,
): EventBridgeEvent<string, TDetail> {
  return {
    version: "0",
    id: init.id ?? randomUUID(),
    "detail-type": init.detailType ?? "Order Placed",
    source: init.source ?? "com.example.orders",
    account,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    region,
    resources: [],
    detail: init.detail,
    ...(init.replayName ? { "replay-name": init.replayName } : {}),
  };
}

export interface SnsRecordInit {
  message: string;
  messageId?: string;
  subject?: string;
  topicName?: string;
  messageAttributes?: SNSMessageAttributes;
}

export function snsEvent(records: SnsRecordInit[]): SNSEvent {
  return {
    Records: records.map((init): SNSEventRecord => {
      const topicArn = `arn:aws:sns:${region}:${account}:${init.topicName ?? "orders"}`;
      return {
        EventVersion: "1.0",
        EventSubscriptionArn: `${topicArn}:${randomUUID()}`,
        EventSource: "aws:sns",
        Sns: {
          SignatureVersion: "1",
          Timestamp: new Date().toISOString(),
          Signature: randomBytes(64).toString("base64"),
          SigningCertUrl: `https://sns.${region}.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem`,
          MessageId: init.messageId ?? randomUUID(),
          Message: init.message,
          MessageAttributes: init.messageAttributes ?? {},
          Type: "Notification",
          UnsubscribeUrl: `https://sns.${region}.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${topicArn}`,
          TopicArn: topicArn,
          ...(init.subject ? { Subject: init.subject } : {}),
        },
      };
    }),
  };
}

// --- HTTP events: API Gateway HTTP API and function URLs, both payload format 2.0 ---

/** What an HTTP request event varies by. */
export interface HttpEventInit {
  method?: string;
  /** The request path, e.g. `/queues/email/jobs` (without a stage). */
  path?: string;
  /** A string body is sent as is; an object is sent as JSON (with its content type). */
  body?: string | object;
  /** Send the body base64-encoded, as AWS does for binary content types. */
  base64?: boolean;
  /** Lower-cased as AWS delivers them. */
  headers?: Record<string, string>;
  query?: Record<string, string>;
  cookies?: string[];
  /** A named HTTP API stage, whose name then prefixes rawPath; `$default` otherwise. */
  stage?: string;
}

function httpEvent(
  init: HttpEventInit,
  endpoint: { apiId: string; domainName: string; routeKey: string },
): APIGatewayProxyEventV2 {
  const method = (init.method ?? "GET").toUpperCase();
  const stage = init.stage ?? "$default";
  const path = init.path ?? "/";
  const rawPath = stage === "$default" ? path : `/${stage}${path}`;
  const text =
    init.body === undefined || typeof init.body === "string" ? init.body : JSON.stringify(init.body);
  const headers: Record<string, string> = {
    accept: "*/*",
    host: endpoint.domainName,
    "user-agent": "curl/8.5.0",
    "x-amzn-trace-id": `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString("hex")}`,
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https",
  };
  if (text !== undefined) {
    headers["content-length"] = String(Buffer.byteLength(text));
    if (typeof init.body === "object") headers["content-type"] = "application/json";
  }
  for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value;
  const query = init.query ?? {};
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: endpoint.routeKey,
    rawPath,
    rawQueryString: new URLSearchParams(query).toString(),
    ...(init.cookies ? { cookies: init.cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: account,
      apiId: endpoint.apiId,
      domainName: endpoint.domainName,
      domainPrefix: endpoint.apiId,
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "203.0.113.7", userAgent: "curl/8.5.0" },
      requestId: randomUUID(),
      routeKey: endpoint.routeKey,
      stage,
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(text === undefined
      ? { isBase64Encoded: false }
      : init.base64
        ? { body: Buffer.from(text).toString("base64"), isBase64Encoded: true }
        : { body: text, isBase64Encoded: false }),
  };
}

/** An API Gateway HTTP API event (payload 2.0) through a greedy `ANY /{proxy+}` route. */
export function apiGatewayV2Event(init: HttpEventInit = {}): APIGatewayProxyEventV2 {
  const apiId = "r3pmxmplak";
  const event = httpEvent(init, {
    apiId,
    domainName: `${apiId}.execute-api.${region}.amazonaws.com`,
    routeKey: "ANY /{proxy+}",
  });
  return { ...event, pathParameters: { proxy: (init.path ?? "/").replace(/^\//, "") } };
}

/** A Lambda function URL event: payload 2.0 with no routing (`$default` route and stage). */
export function functionUrlEvent(init: Omit<HttpEventInit, "stage"> = {}): APIGatewayProxyEventV2 {
  const urlId = "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6";
  return httpEvent(init, {
    apiId: urlId,
    domainName: `${urlId}.lambda-url.${region}.on.aws`,
    routeKey: "$default",
  });
}

/** What an EventBridge `rate(1 minute)` rule delivers to the sweeper. */
export function scheduledEvent(
  ruleName = "nimbusq-dev-SweeperEventsRuleSchedule1",
): EventBridgeEvent<"Scheduled Event", Record<string, never>> {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "Scheduled Event",
    source: "aws.events",
    account,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    region,
    resources: [`arn:aws:events:${region}:${account}:rule/${ruleName}`],
    detail: {},
  };
}
