/**
 * HTTP plumbing shared by the routes. The rule throughout: a request is refused with a JSON answer on
 * a live socket, never by resetting it, because the client treats a reset as a network error and
 * retries the request up to five more times.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export type BodyResult = { kind: "ok"; body: Buffer } | { kind: "too-large" };

/**
 * Reads the whole body. Past `limit` bytes it keeps reading but discards, so the 400 goes out after the
 * client has finished sending and the connection stays usable.
 */
export function readBody(request: IncomingMessage, limit: number): Promise<BodyResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.on("end", () =>
      resolve(size > limit ? { kind: "too-large" } : { kind: "ok", body: Buffer.concat(chunks) }),
    );
    request.on("error", reject);
    // After "end" this is a no-op; before it, the client went away mid-body.
    request.on("close", () => reject(new Error("the client closed the request before sending its body")));
  });
}

export function sendJson(
  response: ServerResponse,
  status: number,
  json: string,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
    ...headers,
  });
  response.end(json);
}

export function sendError(response: ServerResponse, status: number, message: string): void {
  sendJson(response, status, JSON.stringify({ error: message }));
}

/** The media type is what matters; parameters such as `charset` are ignored. */
export function isJsonContentType(header: string | undefined): boolean {
  const type = header?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Bearer token from the header, or `?_token=` as Upstash also accepts; compared in constant time. */
export function isAuthorized(request: IncomingMessage, url: URL, token: string): boolean {
  const header = request.headers.authorization ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  const presented = match?.[1]?.trim() ?? url.searchParams.get("_token");
  if (presented === null || presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(token));
}
