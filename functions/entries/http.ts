/**
 * Lambda entry of the HTTP API (API Gateway HTTP API and function URL alike), configured from the
 * environment: see `httpOptionsFromEnv`, plus `NIMBUSQ_WORKERS` to start a queue's worker as soon as
 * a request makes jobs ready. The Redis token and the API tokens may come from SSM parameters
 * (`…_PARAM`, see config/secrets.ts), read once while the container starts.
 */
import { httpEnvWithSecrets, httpOptionsFromEnv } from "../config/http-env.ts";
import { workerKickFromEnv } from "../config/workers-env.ts";
import { httpHandler } from "../http/index.ts";

const env = await httpEnvWithSecrets();
const options = httpOptionsFromEnv(env);
// The kick counts running workers through the API's own client (one connection per database over TCP).
const kick = workerKickFromEnv(env, undefined, {
  redis: options.redis,
  ...(options.prefix ? { prefix: options.prefix } : {}),
});

export const handler = httpHandler({ ...options, ...(kick ? { kick } : {}) });
