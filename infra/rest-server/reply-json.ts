/**
 * Turns RESP replies into the JSON Upstash sends. With `Upstash-Encoding: base64` every bulk and status
 * string is base64 at every depth, except a status `OK` that is itself the result: the client keeps a
 * top-level "OK" as is, but base64-decodes strings inside arrays unconditionally, so a raw nested "OK"
 * would come back as garbage. Integers are written with Redis's own digits, so values above 2^53 reach
 * the client exactly as Upstash would send them.
 */
import type { RespReply } from "./resp-client.ts";

export type Encoding = "base64" | "utf8";

function stringJson(bytes: Buffer, encoding: Encoding): string {
  return JSON.stringify(encoding === "base64" ? bytes.toString("base64") : bytes.toString("utf8"));
}

/** A value nested inside a result. Errors at this depth have no JSON shape of their own, so they become text. */
function nestedJson(reply: RespReply, encoding: Encoding): string {
  switch (reply.kind) {
    case "integer":
      return reply.digits;
    case "nil":
      return "null";
    case "bulk":
      return stringJson(reply.bytes, encoding);
    case "status":
    case "error":
      return stringJson(Buffer.from(reply.text, "utf8"), encoding);
    case "array":
      return `[${reply.items.map((item) => nestedJson(item, encoding)).join(",")}]`;
  }
}

/** The JSON of a successful result (never call it with an error reply). */
export function resultJson(reply: RespReply, encoding: Encoding): string {
  if (reply.kind === "status" && reply.text === "OK") return '"OK"';
  return nestedJson(reply, encoding);
}

/** One `{"result": …}` or `{"error": "…"}` object; error entries carry no `result` key. */
export function entryJson(reply: RespReply, encoding: Encoding): string {
  if (reply.kind === "error") return errorJson(reply.text);
  return `{"result":${resultJson(reply, encoding)}}`;
}

export function errorJson(message: string): string {
  return JSON.stringify({ error: message });
}
