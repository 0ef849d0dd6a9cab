/**
 * A local stand-in for SSM Parameter Store that the real `@aws-sdk/client-ssm` talks to: it answers
 * GetParameter from a map of parameters (ParameterNotFound otherwise) and records each request.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { SSMClient } from "@aws-sdk/client-ssm";

export interface SsmRecorder {
  url: string;
  /** Parameter name → value; change it between calls to create or rotate a parameter. */
  parameters: Map<string, string>;
  /** Each GetParameter request, in order. */
  requests: { Name: string; WithDecryption?: boolean }[];
  client(): SSMClient;
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

export async function startSsmRecorder(): Promise<SsmRecorder> {
  const parameters = new Map<string, string>();
  const requests: SsmRecorder["requests"] = [];
  const server = createServer(async (request, response) => {
    const text = await body(request);
    const json = { "content-type": "application/x-amz-json-1.1" };
    if (request.headers["x-amz-target"] !== "AmazonSSM.GetParameter") {
      response.writeHead(400, json).end('{"__type":"UnknownOperationException"}');
      return;
    }
    const input = JSON.parse(text) as { Name: string; WithDecryption?: boolean };
    requests.push(input);
    const value = parameters.get(input.Name);
    if (value === undefined) {
      response.writeHead(400, json).end(JSON.stringify({ __type: "ParameterNotFound", message: "" }));
      return;
    }
    const Parameter = { Name: input.Name, Type: "SecureString", Value: value, Version: 1 };
    response.writeHead(200, json).end(JSON.stringify({ Parameter }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    parameters,
    requests,
    client: () =>
      new SSMClient({
        endpoint: url,
        region: "us-east-1",
        credentials: { accessKeyId: "local", secretAccessKey: "local" },
        maxAttempts: 1,
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
