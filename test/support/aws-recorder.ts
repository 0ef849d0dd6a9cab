/**
 * A local HTTP endpoint that the real AWS SDK v3 clients talk to instead of AWS: it answers Lambda
 * Invoke (async, 202) and EventBridge PutEvents, and records what it received. Failures can be
 * injected per PutEvents entry.
 */

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { LambdaClient } from "@aws-sdk/client-lambda";

export interface RecordedInvoke {
  functionName: string;
  invocationType: string | undefined;
  payload: unknown;
}

export interface RecordedEntry {
  EventBusName?: string;
  Source?: string;
  DetailType?: string;
  Detail?: string;
}

export interface AwsRecorder {
  url: string;
  invokes: RecordedInvoke[];
  putEventsCalls: RecordedEntry[][];
  /** Entries whose DetailType matches fail (ErrorCode set) while this returns true. */
  failEntry: (entry: RecordedEntry) => boolean;
  lambdaClient(): LambdaClient;
  eventBridgeClient(): EventBridgeClient;
  close(): Promise<void>;
}

function body(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

const credentials = { accessKeyId: "local", secretAccessKey: "local" };

export async function startAwsRecorder(): Promise<AwsRecorder> {
  const recorder = {
    invokes: [] as RecordedInvoke[],
    putEventsCalls: [] as RecordedEntry[][],
    failEntry: (_entry: RecordedEntry) => false,
  };
  let eventCounter = 0;
  const server: Server = createServer(async (request, response) => {
    const text = await body(request);
    const invoke = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(request.url ?? "");
    if (invoke?.[1]) {
      recorder.invokes.push({
        functionName: decodeURIComponent(invoke[1]),
        invocationType: request.headers["x-amz-invocation-type"] as string | undefined,
        payload: text ? JSON.parse(text) : undefined,
      });
      response.writeHead(202, { "content-type": "application/json" }).end("");
      return;
    }
    if (request.headers["x-amz-target"] === "AWSEvents.PutEvents") {
      const { Entries = [] } = JSON.parse(text) as { Entries?: RecordedEntry[] };
      recorder.putEventsCalls.push(Entries);
      const results = Entries.map((entry) =>
        recorder.failEntry(entry)
          ? { ErrorCode: "InternalFailure", ErrorMessage: "injected" }
          : { EventId: `event-${++eventCounter}` },
      );
      const failedCount = results.filter((r) => "ErrorCode" in r).length;
      response
        .writeHead(200, { "content-type": "application/x-amz-json-1.1" })
        .end(JSON.stringify({ FailedEntryCount: failedCount, Entries: results }));
      return;
    }
    response.writeHead(400, { "content-type": "application/json" }).end('{"message":"unknown request"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(recorder, {
    url,
    lambdaClient: () => new LambdaClient({ endpoint: url, region: "us-east-1", credentials }),
    eventBridgeClient: () => new EventBridgeClient({ endpoint: url, region: "us-east-1", credentials }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
