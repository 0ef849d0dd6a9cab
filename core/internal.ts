/**
 * What nimbusq's own adapters (`functions/`, `infra/`) need from core beyond its public index: the
 * input rules they apply at their edges, the wire codec for idempotent adds, and key names. Not part
 * of the package's public API; users import from the index.
 */

export { decodeOptions, encodeOptions } from "./redis/codec.ts";
export { jobKey, queueKeys } from "./redis/keys.ts";
export { checkRetry } from "./redis/lifecycle.ts";
export {
  jobIdPattern,
  jobIdProblem,
  jobNameProblem,
  keyNameProblem,
  maxJobIdLength,
  maxJobNameBytes,
  maxQueueNameBytes,
  queueNamePattern,
  queueNameProblem,
} from "./redis/names.ts";
export { databaseName } from "./redis/shard-map.ts";
export {
  Checker,
  checkJobId,
  checkJobOptions,
  checkPrefix,
  checkQueueName,
  defaultMaxDataBytes,
  maxDueTime,
  maxPriority,
} from "./validate.ts";
export { type Sandbox, type SandboxOptions, setSandboxFactory } from "./worker/sandbox.ts";
export { countRunningWorkers } from "./worker/worker-registry.ts";
