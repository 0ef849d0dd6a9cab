/**
 * Writes the OpenAPI 3.1 `paths` and `components.schemas` from the routes' zod schemas with zod's own
 * `toJSONSchema` (JSON Schema 2020-12, which OpenAPI 3.1 uses). Two passes: what a client sends (path,
 * query and header parameters, request bodies) as zod's input form, so fields with a default are
 * optional; what the server answers as its output form. Named schemas (schema-docs.ts) become
 * components referred to by `$ref`; a component both sides use must read the same in both.
 */
import * as z from "zod/mini";
import type { ApiRoute, ResponseSpec } from "./api-route.ts";
import { components, docs } from "./schema-docs.ts";

type Json = Record<string, unknown>;
type Schema = z.ZodMiniType;
type Side = "input" | "output";

const componentRef = (name: string) => `#/components/schemas/${name}`;
const anonymous = /^#\/components\/schemas\/(~\d+)$/;

/**
 * Keywords zod writes that say nothing here: the safe-integer bounds of every integer, the doc's
 * `param`, and `additionalProperties: false` on a plain (not strict) object in an answer — a client
 * must not refuse an answer because a later version added a field.
 */
function tidy({ zodSchema, jsonSchema }: { zodSchema: Schema; jsonSchema: Json }): void {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  delete jsonSchema.param;
  const def = zodSchema._zod.def as { type: string; catchall?: unknown };
  if (def.type === "object" && def.catchall === undefined && jsonSchema.additionalProperties === false)
    delete jsonSchema.additionalProperties;
}

/** Every `$ref` to a schema converted only to be inlined is replaced by that schema. */
function inline(node: unknown, temporary: Record<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((item) => inline(item, temporary));
  if (node === null || typeof node !== "object") return node;
  const { $ref } = node as { $ref?: unknown };
  const id = typeof $ref === "string" ? anonymous.exec($ref)?.[1] : undefined;
  if (id !== undefined) return inline(temporary[id], temporary);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, temporary)]));
}

/** Every component name a converted schema refers to. */
function refsOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsOf(item, found);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") found.add(value.slice(componentRef("").length));
      else refsOf(value, found);
    }
  }
  return found;
}

/** One pass: every named schema and every schema in `used`, as JSON Schema of one side. */
function convert(side: Side, named: Map<string, Schema>, used: Schema[]) {
  const ids = z.registry<{ id: string }>();
  for (const [name, schema] of named) ids.add(schema, { id: name });
  const temporary = new Map<Schema, string>();
  for (const schema of used) {
    if (ids.has(schema) || temporary.has(schema)) continue;
    const id = `~${temporary.size}`;
    temporary.set(schema, id);
    ids.add(schema, { id });
  }
  const { schemas } = z.toJSONSchema(ids, {
    metadata: docs,
    io: side,
    target: "draft-2020-12",
    uri: componentRef,
    override: tidy as never,
  }) as { schemas: Record<string, Json> };
  if ("__shared" in schemas) throw new Error("a schema is reused without a name: name it (schema-docs.ts)");
  for (const json of Object.values(schemas)) {
    delete json.$id;
    delete json.$schema;
  }
  const plain = Object.fromEntries([...temporary.values()].map((id) => [id, schemas[id] as Json]));
  const of = (schema: Schema) => {
    const id = temporary.get(schema);
    return (
      id === undefined ? { $ref: componentRef(ids.get(schema)?.id ?? "") } : inline(plain[id], plain)
    ) as Json;
  };
  const named$ = new Map([...named.keys()].map((name) => [name, inline(schemas[name], plain) as Json]));
  return { of, named: named$ };
}

/** The parameters of one part (`path`, `query`, `header`) from its object schema. */
function parameters(where: string, schema: Schema | undefined, json: (s: Schema) => Json): Json[] {
  if (schema === undefined) return [];
  const object = json(schema) as { properties?: Record<string, Json>; required?: string[] };
  const shape = (schema._zod.def as { shape?: Record<string, Schema> }).shape ?? {};
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const meta = shape[name] && docs.get(shape[name]);
    const description = meta?.param?.description ?? property.description;
    // zod leaves a default out of an optional field it reads as input; the parameter has it.
    const schema = meta?.default === undefined ? property : { ...property, default: meta.default };
    return {
      schema,
      required: where === "path" || (object.required ?? []).includes(name),
      ...(description === undefined ? {} : { description }),
      name,
      in: where,
    };
  });
}

function response(spec: ResponseSpec, json: (s: Schema) => Json): Json {
  return {
    description: spec.description,
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.schema ? { content: { "application/json": { schema: json(spec.schema) } } } : {}),
  };
}

/** `paths` and `components.schemas` of the document for these routes. */
export function pathsAndSchemas(routes: readonly ApiRoute[]): {
  paths: Record<string, Record<string, Json>>;
  schemas: Json;
} {
  const bodies = new Map<string, Schema>();
  for (const route of routes) {
    const body = route.request?.body;
    if (body) bodies.set(body.name, body.schema);
  }
  const sent = routes.flatMap(({ request }) => [request?.params, request?.query, request?.headers]);
  const answered = routes.flatMap(({ responses }) => Object.values(responses).map((spec) => spec.schema));
  const defined = <T>(items: (T | undefined)[]) => items.filter((item): item is T => item !== undefined);
  const input = convert("input", new Map([...components, ...bodies]), defined(sent));
  const output = convert("output", new Map(components), defined(answered));

  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const { request } = route;
    const operation: Json = {
      operationId: route.operationId,
      tags: route.tags,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(route.security ? { security: route.security } : {}),
    };
    const params = [
      ...parameters("path", request?.params, input.of),
      ...parameters("query", request?.query, input.of),
      ...parameters("header", request?.headers, input.of),
    ];
    if (params.length > 0) operation.parameters = params;
    if (request?.body) {
      const { name, required, description } = request.body;
      operation.requestBody = {
        required,
        description,
        content: { "application/json": { schema: { $ref: componentRef(name) } } },
      };
    }
    operation.responses = Object.fromEntries(
      Object.entries(route.responses).map(([status, spec]) => [status, response(spec, output.of)]),
    );
    paths[route.path] = { ...paths[route.path], [route.method]: operation };
  }

  const requestSide = closure(
    routes.map((route) => pick(paths[route.path]?.[route.method], ["parameters", "requestBody"])),
    input.named,
  );
  const answerSide = closure(
    routes.map((route) => pick(paths[route.path]?.[route.method], ["responses"])),
    output.named,
  );
  const schemas: Json = {};
  for (const name of [...new Set([...requestSide, ...answerSide])]) {
    const sent = input.named.get(name);
    const answered = output.named.get(name);
    if (requestSide.has(name) && answerSide.has(name) && JSON.stringify(sent) !== JSON.stringify(answered))
      throw new Error(`component ${name} reads differently in requests and answers: give each side its own`);
    schemas[name] = requestSide.has(name) ? sent : answered;
  }
  return { paths, schemas };
}

function pick(object: Json | undefined, keys: string[]): Json {
  return Object.fromEntries(keys.map((key) => [key, object?.[key]]));
}

/** The components `roots` refer to, and those they refer to, in the order first met. */
function closure(roots: unknown[], named: Map<string, Json>): Set<string> {
  const found = new Set<string>();
  const pending = [...refsOf(roots)];
  for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
    if (found.has(name)) continue;
    const json = named.get(name);
    if (json === undefined) throw new Error(`no component ${name}`);
    found.add(name);
    pending.push(...refsOf(json));
  }
  return found;
}
