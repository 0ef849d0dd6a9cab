/**
 * Data a Lambda bundle carries but reads rarely (the OpenAPI document, the Lua scripts' sources), as
 * JSON compressed with brotli at its best and written as base64 into the bundle's text. The bundle
 * unpacks it with node:zlib when first needed.
 */
import { brotliCompressSync, constants } from "node:zlib";

export function packJson(value: unknown): string {
  const json = Buffer.from(JSON.stringify(value), "utf8");
  return brotliCompressSync(json, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
      [constants.BROTLI_PARAM_SIZE_HINT]: json.byteLength,
    },
  }).toString("base64");
}
