/**
 * Reads a JSON request body within a size limit. The limit is checked twice: against Content-Length
 * before reading (a cheap early 413), and against the bytes actually read (Content-Length may be
 * missing, as with chunked uploads, or wrong).
 */
import { errorCodes, HttpError, invalid } from "./http-errors.ts";

/** `application/json`, with or without parameters, or any `+json` type. */
export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false;
  const type = (header.split(";")[0] ?? "").trim().toLowerCase();
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

function tooLarge(limit: number): HttpError {
  return new HttpError(
    413,
    errorCodes.payloadTooLarge,
    `the request body is larger than the limit of ${limit} bytes`,
  );
}

async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > limit) throw tooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Says what was wrong without quoting the header back: an answer never echoes a raw header value. */
function unsupported(contentType: string | null): HttpError {
  const got = contentType === null ? "none was given" : "got another type";
  return new HttpError(
    415,
    errorCodes.unsupportedMediaType,
    `Content-Type must be application/json, ${got}`,
    "Content-Type",
  );
}

/**
 * The parsed JSON body. With `required`, a JSON content type and a non-empty body must be there.
 * Otherwise an empty body gives undefined whatever its declared type (as `curl -X POST -d ''` sends
 * a form type), and a body that is there must be declared and be JSON.
 */
export async function readJsonBody(request: Request, limit: number, required: boolean): Promise<unknown> {
  const contentType = request.headers.get("content-type");
  const json = isJsonContentType(contentType);
  if (required && !json) throw unsupported(contentType);
  const bytes = await readLimited(request, limit);
  if (bytes.byteLength === 0) {
    if (required) throw new HttpError(400, errorCodes.invalidJson, "the request body is empty", "body");
    return undefined;
  }
  if (!json) throw unsupported(contentType);
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new HttpError(400, errorCodes.invalidJson, "the request body is not valid UTF-8", "body");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : "a syntax error";
    throw new HttpError(400, errorCodes.invalidJson, `the request body is not valid JSON: ${reason}`, "body");
  }
  const field = nonFiniteNumberAt(value);
  if (field !== undefined)
    throw invalid(field, `${field} is a number JSON cannot carry (too large: it would be stored as null)`);
  // A literal null is no body the API takes (every body is an object, or an array of jobs); an
  // optional body is left out, not null.
  if (value === null) throw invalid("body", "the request body must be a JSON object, not null");
  return value;
}

/**
 * The path (`data.n`, `[2].data.n`, `body` for the root) of the first number JSON.parse turned into
 * ±Infinity (`1e400`), which JSON.stringify would then write as null. Walked with a stack, not
 * recursion, so a deeply nested body cannot overflow the call stack.
 */
export function nonFiniteNumberAt(root: unknown): string | undefined {
  const pending: [unknown, string][] = [[root, ""]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return path === "" ? "body" : path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push([value[i], `${path}[${i}]`]);
    } else if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        pending.push([child, path === "" ? key : `${path}.${key}`]);
      }
    }
  }
  return undefined;
}
