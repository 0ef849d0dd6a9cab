/**
 * Lambda entry of the HTTP API (API Gateway HTTP API and function URL alike), configured from the
 * environment: see `httpOptionsFromEnv`, plus `NIMBUSQ_WORKERS` to start a queue's worker as soon as
 * a request makes jobs ready.
 */
import { workerKickFromEnv } from "../config/workers-env.ts";
import { httpHandler, httpOptionsFromEnv } from "../http/index.ts";

const kick = workerKickFromEnv(process.env);

export const handler = httpHandler({ ...httpOptionsFromEnv(process.env), ...(kick ? { kick } : {}) });
