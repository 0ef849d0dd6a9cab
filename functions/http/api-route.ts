/**
 * An operation of the HTTP API as data — method, path, parameters, body and answers with their zod
 * schemas — which `mount` serves on the Hono app (checking the path, query and header parameters
 * before the handler runs) and openapi.ts writes into the document. One definition, so the document
 * cannot say what the server does not check.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import type * as z from "zod/mini";
import type { AppEnv } from "./app-env.ts";
import { refusal } from "./validation.ts";

export type Method = "get" | "post" | "delete";

/** A JSON request body: listed as the component `name`; handlers read it with `validBody`. */
export interface RequestBodySpec {
  name: string;
  schema: z.ZodMiniType;
  required: boolean;
  description: string;
}

export interface HeaderSpec {
  description: string;
  required: boolean;
  schema: { type: "string" };
}

/** One answer: its description, its JSON body's schema and the headers it carries. */
export interface ResponseSpec {
  description: string;
  schema?: z.ZodMiniType;
  headers?: Record<string, HeaderSpec>;
}

export interface RouteRequest {
  params?: z.ZodMiniType;
  query?: z.ZodMiniType;
  headers?: z.ZodMiniType;
  body?: RequestBodySpec;
}

export interface ApiRoute {
  method: Method;
  /** OpenAPI's form: `/queues/{queue}/jobs/{id}`. */
  path: string;
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  /** Omitted: the document's default (any token); `[]`: public. */
  security?: Record<string, string[]>[];
  request?: RouteRequest;
  responses: Record<number, ResponseSpec>;
}

type Checked<S> = S extends z.ZodMiniType ? z.output<S> : undefined;
type Part<R extends ApiRoute, K extends "params" | "query" | "headers"> = Checked<
  NonNullable<R["request"]>[K]
>;

/** The route's parameters after their schemas checked (and transformed) them. */
export interface RouteInput<R extends ApiRoute> {
  params: Part<R, "params">;
  query: Part<R, "query">;
  headers: Part<R, "headers">;
}

/** Where each part is read from, named as a refused one's `field` names it (validation.ts). */
const parts = [
  ["query", "query"],
  ["params", "param"],
  ["headers", "header"],
] as const;

/**
 * The request's values for one part: a query key given more than once is an array (and refused);
 * headers under the names the schema spells (`Idempotency-Key`), whatever case the client sent.
 */
function valuesOf(c: Context<AppEnv>, target: "query" | "param" | "header", schema: z.ZodMiniType): unknown {
  if (target === "param") return c.req.param();
  if (target === "header") {
    const shape = (schema._zod.def as { shape?: Record<string, unknown> }).shape ?? {};
    const spelt = new Map(Object.keys(shape).map((name) => [name.toLowerCase(), name]));
    return Object.fromEntries(
      Object.entries(c.req.header()).map(([name, value]) => [spelt.get(name) ?? name, value]),
    );
  }
  const entries = Object.entries(c.req.queries()).map(([key, values]) => [
    key,
    values.length === 1 ? values[0] : values,
  ]);
  return Object.fromEntries(entries);
}

/**
 * Serves `route`: `middleware` first (so a queue outside the allow-list answers 404 whatever else is
 * wrong), then the parameter checks (a failure answers the API's 400 naming the parameter), then the
 * handler with what they checked.
 */
export function mount<R extends ApiRoute>(
  app: Hono<AppEnv>,
  route: R,
  middleware: MiddlewareHandler<AppEnv>[],
  handler: (c: Context<AppEnv>, input: RouteInput<R>) => Response | Promise<Response>,
): void {
  const path = route.path.replace(/\{(\w+)\}/g, ":$1");
  const serve: MiddlewareHandler<AppEnv> = async (c) => {
    const input: Record<string, unknown> = { params: undefined, query: undefined, headers: undefined };
    for (const [part, target] of parts) {
      const schema = route.request?.[part];
      if (schema === undefined) continue;
      const result = await schema.safeParseAsync(valuesOf(c, target, schema));
      if (!result.success) throw refusal(result.error.issues, target);
      input[part] = result.data;
    }
    return await handler(c, input as unknown as RouteInput<R>);
  };
  app.on([route.method.toUpperCase()], [path], ...middleware, serve);
}
