/**
 * Test and dev controls under `/__nimbusq/`: read or reset the billing counters and set a fault. They
 * need the same token as the data routes and are not counted as requests.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { UsageMeter } from "./billing.ts";
import { TOO_LARGE } from "./command-routes.ts";
import { type FaultInjector, parseFault } from "./faults.ts";
import { readBody, sendError, sendJson } from "./http-io.ts";

export const ADMIN_PREFIX = "/__nimbusq/";

const ROUTES: Record<string, string> = {
  "/__nimbusq/stats": "GET",
  "/__nimbusq/stats/reset": "POST",
  "/__nimbusq/fault": "POST",
};

const OK = '{"result":"OK"}';

export async function handleAdmin(
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  controls: { meter: UsageMeter; faults: FaultInjector; maxBodyBytes: number },
): Promise<void> {
  const body = await readBody(request, controls.maxBodyBytes);
  const method = ROUTES[path];
  if (!method) {
    sendError(response, 404, `ERR unknown admin route ${path}; known: ${Object.keys(ROUTES).join(", ")}`);
    return;
  }
  if (request.method !== method) {
    sendError(response, 405, `ERR method ${request.method ?? "?"} not allowed on ${path}; use ${method}`);
    return;
  }
  if (path === "/__nimbusq/stats") {
    sendJson(response, 200, JSON.stringify(controls.meter.stats()));
  } else if (path === "/__nimbusq/stats/reset") {
    controls.meter.reset();
    sendJson(response, 200, OK);
  } else {
    if (body.kind === "too-large") {
      sendError(response, 400, TOO_LARGE);
      return;
    }
    try {
      controls.faults.set(parseFault(JSON.parse(body.body.toString("utf8"))));
    } catch (error) {
      sendError(
        response,
        400,
        `ERR invalid fault: ${error instanceof Error ? error.message : String(error)}`,
      );
      return;
    }
    sendJson(response, 200, OK);
  }
}
