/**
 * The Lambda entry of the HTTP API, for API Gateway HTTP APIs and function URLs alike (both send the
 * payload format 2.0 event). A small adapter of our own rather than `hono/aws-lambda`'s `handle`,
 * which is deprecated in Hono 4 and keeps a named stage in the path: an HTTP API stage `prod`
 * delivers `rawPath` `/prod/queues/…`, and the routes know nothing of stages.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { logger } from "../log.ts";
import { setInvocationDeadline } from "../request-deadline.ts";
import { createHttpApp } from "./app.ts";
import { errorBody, errorCodes, HttpError } from "./http-errors.ts";
import { unauthorized } from "./middleware.ts";
import type { HttpOptions } from "./options.ts";

/** The path the routes see: `rawPath` without a named stage's leading segment. */
function routePath(event: APIGatewayProxyEventV2): string {
  const raw = event.rawPath || "/";
  const stage = event.requestContext.stage;
  if (stage && stage !== "$default") {
    const prefix = `/${stage}`;
    if (raw === prefix) return "/";
    if (raw.startsWith(`${prefix}/`)) return raw.slice(prefix.length);
  }
  return raw;
}

/** A request no Request can carry, refused without quoting any of it (a header may hold a token). */
class UnreadableRequest extends Error {
  constructor(readonly refusal: HttpError) {
    super(refusal.message);
  }
}

function decodeBase64(text: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    throw new UnreadableRequest(
      new HttpError(400, errorCodes.invalidRequest, "the body is marked base64 but is not", "body"),
    );
  }
}

const tokenPattern = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function headersFromEvent(event: APIGatewayProxyEventV2): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value === undefined) continue;
    try {
      headers.set(name, value);
    } catch {
      // The value (or name) is never quoted back: an Authorization header carries a credential.
      if (name.toLowerCase() === "authorization") throw new UnreadableRequest(unauthorized());
      const which = tokenPattern.test(name) ? `the ${name.toLowerCase()} header` : "a header";
      throw new UnreadableRequest(
        new HttpError(400, errorCodes.invalidRequest, `${which} holds characters no HTTP header may carry`),
      );
    }
  }
  return headers;
}

/**
 * Methods fetch's Request refuses (CONNECT, TRACE, TRACK, or not a token at all) still reach the app,
 * which answers them 405 with Allow as any other method the path lacks: the Request is built as GET
 * and reports the method it came with, as `@hono/node-server` does for TRACE.
 */
function withMethod(request: Request, method: string): Request {
  if (request.method !== method) Object.defineProperty(request, "method", { get: () => method });
  return request;
}

/** The fetch Request an event stands for; throws UnreadableRequest for what no Request can carry. */
function requestFromEvent(event: APIGatewayProxyEventV2): Request {
  const method = event.requestContext.http.method.toUpperCase();
  const headers = headersFromEvent(event);
  // Payload 2.0 moves cookies out of the headers.
  if (event.cookies && event.cookies.length > 0) headers.set("cookie", event.cookies.join("; "));
  const host = event.requestContext.domainName || "localhost";
  const query = event.rawQueryString ? `?${event.rawQueryString}` : "";
  const url = `https://${host}${routePath(event)}${query}`;
  const usable = tokenPattern.test(method) && !["CONNECT", "TRACE", "TRACK"].includes(method);
  if (!usable) return withMethod(new Request(url, { method: "GET", headers }), method);
  let body: Uint8Array | undefined;
  if (event.body && method !== "GET" && method !== "HEAD") {
    body = event.isBase64Encoded ? decodeBase64(event.body) : new TextEncoder().encode(event.body);
    // What arrived is what counts: the client's Content-Length described the body before any encoding.
    headers.set("content-length", String(body.byteLength));
  }
  return new Request(url, { method, headers, ...(body ? { body } : {}) });
}

async function resultFromResponse(response: Response): Promise<APIGatewayProxyStructuredResultV2> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  // Every answer of the API is JSON text, so the body never needs base64.
  return {
    statusCode: response.status,
    headers,
    body: await response.text(),
    isBase64Encoded: false,
    ...(cookies.length > 0 ? { cookies } : {}),
  };
}

export type HttpLambdaHandler = (
  event: APIGatewayProxyEventV2,
  context?: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * A Lambda handler serving the HTTP API. Build it at module scope so warm invocations reuse the app.
 *
 * @example
 * export const handler = httpHandler({ ...httpOptionsFromEnv(process.env), kick: invokeWorker });
 */
export function httpHandler(options: HttpOptions): HttpLambdaHandler {
  const app = createHttpApp(options);
  return async (event, context) => {
    setInvocationDeadline(context);
    logger.startInvocation(context);
    let request: Request;
    try {
      request = requestFromEvent(event);
    } catch (error) {
      // A header value or URL no Request accepts, or a body that is not base64: the client's doing.
      // The message is fixed: the runtime's own would quote the offending value, a token perhaps.
      const refused =
        error instanceof UnreadableRequest
          ? error.refusal
          : new HttpError(400, errorCodes.invalidRequest, "the request cannot be read");
      const headers = { "content-type": "application/json", ...refused.headers };
      return resultFromResponse(
        new Response(JSON.stringify(errorBody(refused)), { status: refused.status, headers }),
      );
    }
    // The context lets `?wait=` end before the invocation's time does.
    return resultFromResponse(await app.fetch(request, context ? { lambdaContext: context } : undefined));
  };
}
