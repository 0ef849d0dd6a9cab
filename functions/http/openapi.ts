/**
 * The OpenAPI 3.1 document of the HTTP API, served at `GET /openapi.json` (public). Nothing in it is
 * written by hand but prose: every path, parameter, body and answer comes from the route definitions
 * (api-route.ts) and the zod schemas the app validates with (openapi-build.ts converts them).
 */
import type { ApiRoute } from "./api-route.ts";
import { cancelJobRoute } from "./cancel-route.ts";
import { addJobsRoute } from "./enqueue.ts";
import { listGroupsRoute, pauseGroupRoute, resumeGroupRoute } from "./group-routes.ts";
import { listJobsRoute } from "./job-list-route.ts";
import { getJobRoute, removeJobRoute, retryJobRoute } from "./job-routes.ts";
import { cleanRoute, drainRoute, promoteRoute, retryJobsRoute } from "./maintenance-routes.ts";
import { pathsAndSchemas } from "./openapi-build.ts";
import { openApiRoute } from "./openapi-route.ts";
import type { ApiServer } from "./options.ts";
import { getQueueRoute, pauseQueueRoute, resumeQueueRoute } from "./queue-routes.ts";
import { redriveRoute } from "./redrive-route.ts";

/** The local stack's API (`npm start`), the default `servers` entry. */
export const localServer: ApiServer = {
  url: "http://localhost:3000",
  description:
    "The local stack (npm start); set NIMBUSQ_API_URL or createHttpApp's servers for a deployed API",
};

/** Every operation, in the order the document lists them. */
export const apiRoutes: readonly ApiRoute[] = [
  addJobsRoute,
  listJobsRoute,
  getJobRoute,
  removeJobRoute,
  retryJobRoute,
  cancelJobRoute,
  getQueueRoute,
  pauseQueueRoute,
  resumeQueueRoute,
  listGroupsRoute,
  pauseGroupRoute,
  resumeGroupRoute,
  redriveRoute,
  retryJobsRoute,
  cleanRoute,
  drainRoute,
  promoteRoute,
  openApiRoute,
];

const description = `BullMQ 6 queues over Upstash Redis.

**Tokens.** Every operation but this document needs \`Authorization: Bearer <token>\` (security scheme \`token\`). Operations whose security is \`adminToken\` need an admin token (\`admin:\` in NIMBUSQ_API_TOKENS, NIMBUSQ_ADMIN_TOKENS, or \`{ admin: true }\` in createHttpApp's tokens); any other token answers 403 forbidden there.

**Errors.** Every error answers \`{ "error": { "code", "message", "field"? } }\`; each response lists the codes it can carry. \`field\` names the offending input as the client wrote it (\`opts.priority\`, \`[3].opts.delay\`, \`body\`, a query parameter, \`Idempotency-Key\`, \`Content-Type\`). No message quotes a header value back. Any method a path does not serve (unknown ones included) answers 405 with \`Allow\`; a path no route has answers 404 not_found.

**Bodies.** JSON (\`application/json\` or \`+json\`), at most 1 MiB unless configured (createHttpApp's maxBodyBytes, NIMBUSQ_MAX_BODY_BYTES): a larger one answers 413 whatever its Content-Length says. Operations with an optional body take no body, an empty one, or an object; a body that is there must be declared JSON (415). Unknown fields and numbers JSON cannot carry (1e400) answer 400 naming the field.

**Workers.** With a worker kick configured, requests that make jobs ready (add, retry, resume, redrive, promote) start the queue's worker at once.

**Idempotency.** See the Idempotency-Key parameter of addJobs: the key holds as long as a job with its id exists, not longer.

**CORS** is off by default; with allowed origins (createHttpApp's cors, NIMBUSQ_CORS_ORIGINS), a preflight from one needs no token and answers 204 with the path's methods, one from another origin 403; answers to an allowed origin carry Access-Control-Allow-Origin and expose Location, Allow and WWW-Authenticate.`;

/** The document as openApiDocument writes it. */
export type OpenApiDocument = ReturnType<typeof openApiDocument>;

/**
 * The document for these servers (the local stack's by default).
 *
 * @example
 * const doc = openApiDocument([{ url: "https://api.example.com" }]);
 */
export function openApiDocument(servers: readonly ApiServer[] = [localServer]) {
  const { paths, schemas } = pathsAndSchemas(apiRoutes);
  return {
    openapi: "3.1.0",
    info: {
      title: "nimbusq HTTP API",
      version: "1",
      description,
      license: { name: "MIT", url: "https://spdx.org/licenses/MIT.html" },
    },
    servers: servers.map((server) => ({ ...server })),
    security: [{ token: [] }],
    tags: [
      { name: "jobs", description: "Add, read, list, retry and remove jobs" },
      { name: "queues", description: "Counts, pause and resume" },
      { name: "maintenance", description: "Queue-wide admin operations, each in bounded steps" },
      { name: "meta", description: "This document" },
    ],
    components: {
      securitySchemes: {
        token: {
          type: "http",
          scheme: "bearer",
          description: "Any of the API's tokens (NIMBUSQ_API_TOKENS, createHttpApp's tokens)",
        },
        adminToken: {
          type: "http",
          scheme: "bearer",
          description:
            "An admin token: the operations that name this scheme answer 403 forbidden to any other",
        },
      },
      schemas,
    },
    paths,
  };
}
