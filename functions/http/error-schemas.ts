/**
 * The error answers in the document: one `{ error: { code, message, field? } }` shape, and per
 * operation and status only the codes that status can carry there, so a generated client's types say
 * which errors to expect. Headers the server sends with them are documented with them.
 */
import * as z from "zod/mini";
import type { HeaderSpec, ResponseSpec } from "./api-route.ts";
import { type ErrorCode, errorCodes } from "./http-errors.ts";
import { doc, named } from "./schema-docs.ts";

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 500 | 503;

const meaning: Record<ErrorCode, string> = {
  invalid_request: "a parameter, header or body field breaks its rule (`field` names it)",
  invalid_json: "the body is empty where one is required, not UTF-8, or not JSON",
  parent_not_found: "opts.parent names no job",
  unauthorized: "no valid `Authorization: Bearer <token>`",
  forbidden: "the operation needs an admin token",
  not_found: "no route has this path",
  unknown_queue: "the API's queue allow-list lacks the queue",
  job_not_found: "no job has this id (ids that name one of the queue's own keys included)",
  method_not_allowed: "the path does not serve this method (see Allow)",
  idempotency_key_reused: "the Idempotency-Key was used before with another request",
  job_locked: "a worker holds the job",
  wrong_state: "the job (or queue) is not in a state the operation applies to",
  parent_conflict: "a job with this id exists with another parent",
  payload_too_large: "the body is over the size limit (1 MiB unless configured)",
  job_in_flight: "a large add still being staged holds this custom id: retry after Retry-After",
  retry_later: "a large add outlived its staging and wrote nothing: send it again after Retry-After",
  unsupported_media_type: "a body was sent without Content-Type application/json (or +json)",
  internal: 'a server fault; the body says only "internal error"',
};

const pascal = (code: string) => code.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

const fieldSchema = doc(z.string(), {
  description:
    "The offending input: a body path (opts.priority, [3].data), query or path parameter, or header",
  example: "opts.priority",
});

const schemas = new Map<string, z.ZodMiniType>();

/** The error body whose code is one of `codes`, registered once per set as `<Codes>Error`. */
function errorBody(codes: readonly [ErrorCode, ...ErrorCode[]]): z.ZodMiniType {
  const name = `${codes.map(pascal).join("Or")}Error`;
  let schema = schemas.get(name);
  if (!schema) {
    const [first] = codes;
    schema = named(
      name,
      z.object({
        error: z.object({ code: z.enum(codes), message: z.string(), field: z.optional(fieldSchema) }),
      }),
      { example: { error: { code: first, message: meaning[first] } } },
    );
    schemas.set(name, schema);
  }
  return schema;
}

const header = (description: string, required: boolean): HeaderSpec => ({
  description,
  required,
  schema: { type: "string" },
});

const headersOf: Partial<Record<ErrorStatus, Record<string, HeaderSpec>>> = {
  401: {
    "WWW-Authenticate": header(
      '`Bearer realm="nimbusq"` (with `error="invalid_token"` for a wrong one)',
      true,
    ),
  },
  405: { Allow: header("The methods the path serves, e.g. `GET, HEAD`", true) },
  409: { "Retry-After": header("Seconds to wait, with job_in_flight", false) },
  503: { "Retry-After": header("Seconds to wait", true) },
};

export type ErrorSpec = Partial<Record<ErrorStatus, readonly ErrorCode[]>>;

/** What every authenticated operation on a queue can answer. */
const common: ErrorSpec = {
  400: [errorCodes.invalidRequest],
  401: [errorCodes.unauthorized],
  404: [errorCodes.unknownQueue],
  405: [errorCodes.methodNotAllowed],
  500: [errorCodes.internal],
};

/** And what reading a JSON body adds. */
const withBody: ErrorSpec = {
  400: [errorCodes.invalidJson],
  413: [errorCodes.payloadTooLarge],
  415: [errorCodes.unsupportedMediaType],
};

/**
 * The error responses of one operation: those of every operation on a queue (unless `common` is
 * false), admin's 403, a JSON body's, and `extra`.
 */
export function errorResponses(options: {
  common?: boolean;
  admin?: boolean;
  body?: boolean;
  extra?: ErrorSpec;
}) {
  const specs = [
    options.common === false ? {} : common,
    options.admin ? { 403: [errorCodes.forbidden] } : {},
  ];
  if (options.body) specs.push(withBody);
  specs.push(options.extra ?? {});
  const merged = new Map<ErrorStatus, ErrorCode[]>();
  for (const spec of specs) {
    for (const [status, codes] of Object.entries(spec) as [string, ErrorCode[]][]) {
      const key = Number(status) as ErrorStatus;
      merged.set(key, [...new Set([...(merged.get(key) ?? []), ...codes])]);
    }
  }
  const responses: Record<number, ResponseSpec> = {};
  for (const [status, codes] of [...merged].sort(([a], [b]) => a - b)) {
    const list = codes as [ErrorCode, ...ErrorCode[]];
    responses[status] = {
      description: list.map((code) => `${code}: ${meaning[code]}`).join("; "),
      schema: errorBody(list),
      ...(headersOf[status] ? { headers: headersOf[status] } : {}),
    };
  }
  return responses;
}
