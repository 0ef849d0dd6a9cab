/**
 * What the HTTP API's schemas say beyond their rules, for `/openapi.json`: descriptions, examples,
 * defaults, how a parameter is documented, and the names of the schemas the document lists as
 * components. The schemas are zod's `zod/mini` (functions, not methods, so a bundle carries only what
 * it uses: the schema layer was 229 KB of the HTTP bundle with zod's full build and an OpenAPI
 * library, and is a fifth of that); openapi.ts turns them into JSON Schema with zod's own
 * `toJSONSchema` when the document is first asked for, or, for the Lambda bundle, when it is built
 * (served-document.ts).
 */
import * as z from "zod/mini";

/** JSON Schema keywords a schema's documentation adds or overrides (`type` for a query integer). */
export interface DocMeta {
  description?: string;
  example?: unknown;
  default?: unknown;
  type?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string | undefined;
  enum?: readonly unknown[] | undefined;
  /** As a path, query or header parameter: the parameter's own description. */
  param?: { description: string };
}

/** The documentation of every schema that has some; a derived schema inherits its parent's. */
export const docs = z.registry<DocMeta>();

/** Schemas the document lists under `components.schemas`, by name, in the order they were named. */
export const components = new Map<string, z.ZodMiniType>();

/** A copy of `schema` with `meta` added to what it already says (the original is left as it was). */
export function doc<S extends z.ZodMiniType>(schema: S, meta: DocMeta): S {
  const copy = schema.clone() as S;
  docs.add(copy, meta as never);
  return copy;
}

/** `schema`, documented, and listed as the component `name` (referenced as `#/components/schemas/<name>`). */
export function named<S extends z.ZodMiniType>(name: string, schema: S, meta: DocMeta = {}): S {
  if (components.has(name)) throw new Error(`two schemas are named ${name}`);
  const documented = Object.keys(meta).length > 0 ? doc(schema, meta) : schema;
  components.set(name, documented);
  return documented;
}

/** `schema` as an optional field, documented. */
export function optional<S extends z.ZodMiniType>(schema: S, meta?: DocMeta): z.ZodMiniOptional<S> {
  const field = z.optional(schema);
  return meta ? doc(field, meta) : field;
}
