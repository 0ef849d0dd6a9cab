/**
 * What nimbusq's own adapters (`functions/`, `infra/`) need from core beyond its public index: the
 * input rules they apply at their edges, the wire codec for idempotent adds, and key names. Not part
 * of the package's public API; users import from the index.
 */
export { decodeOptions, encodeOptions } from "./codec.ts";
export { jobKey } from "./keys.ts";
export {
  jobIdPattern,
  keyNameProblem,
  maxJobIdLength,
  maxJobNameBytes,
  maxQueueNameBytes,
  queueNamePattern,
} from "./names.ts";
export { countRunningWorkers } from "./running-workers.ts";
export { Checker, checkJobId, checkJobOptions, checkPrefix, checkQueueName } from "./validate.ts";
