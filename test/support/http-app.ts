/**
 * The HTTP suites' harness: an app over the shared REST server with a fresh prefix, a `call` that goes
 * through `app.request()` and decodes the JSON answer, and a full picture of the prefix's Redis
 * contents (every key's DUMP) to show that a refused request changed nothing.
 */
import type { Redis as IORedis } from "ioredis";
import { expect } from "vitest";
import { createHttpApp, type HttpOptions } from "../../functions/http/index.ts";
import { keysUnder, sharedRedis, uniquePrefix } from "./stack.ts";

export const userToken = "user-7c1e0b9a";
export const adminToken = "admin-52d4f18e";

export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface CallInit {
  /** A bearer token; the user token when left out, none with null. */
  token?: string | null;
  /** Sent as JSON with `Content-Type: application/json` unless headers say otherwise. */
  json?: unknown;
  /** Sent as is. */
  raw?: NonNullable<RequestInit["body"]>;
  headers?: Record<string, string>;
}

export function makeApi(options: Partial<HttpOptions> = {}) {
  const prefix = uniquePrefix("h");
  const logged: { message: string; error: unknown }[] = [];
  const app = createHttpApp({
    redis: sharedRedis(),
    prefix,
    tokens: [{ token: userToken }, { token: adminToken, admin: true }],
    log: (message, error) => logged.push({ message, error }),
    ...options,
  });
  async function call(method: string, path: string, init: CallInit = {}): Promise<Answer> {
    const headers = new Headers(init.headers);
    const token = init.token === undefined ? userToken : init.token;
    if (token !== null) headers.set("authorization", `Bearer ${token}`);
    let body: RequestInit["body"] = init.raw;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const response = await app.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      // A streamed body (no Content-Length) must say so.
      ...(body instanceof ReadableStream ? { duplex: "half" as const } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === "" ? undefined : JSON.parse(text),
    };
  }
  const admin = (method: string, path: string, init: CallInit = {}) =>
    call(method, path, { token: adminToken, ...init });
  return { app, prefix, call, admin, logged };
}

/** A field of a JSON answer (tests read answers loosely; the assertions check the shapes). */
export function field<T = unknown>(answer: Answer, ...path: (string | number)[]): T {
  let value: unknown = answer.body;
  for (const step of path) value = (value as Record<string | number, unknown> | undefined)?.[step];
  return value as T;
}

/** Asserts the one error shape: status, code, field (when given), a message and nothing else. */
export function expectError(answer: Answer, status: number, code: string, errorField?: string): void {
  expect({ status: answer.status, code: field(answer, "error", "code") }).toEqual({ status, code });
  expect(Object.keys(answer.body as object)).toEqual(["error"]);
  expect(field<string>(answer, "error", "message")).toEqual(expect.any(String));
  if (errorField !== undefined) expect(field(answer, "error", "field")).toBe(errorField);
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  expect(JSON.stringify(answer.body)).not.toMatch(/\n\s+at |\.ts:\d+/);
}

/** Every key under the prefix with its serialized value: equal pictures mean nothing changed. */
export async function redisPicture(direct: IORedis, prefix: string): Promise<Record<string, string>> {
  const picture: Record<string, string> = {};
  for (const key of await keysUnder(direct, prefix)) {
    picture[key] = ((await direct.dumpBuffer(key)) ?? Buffer.alloc(0)).toString("hex");
  }
  return picture;
}
