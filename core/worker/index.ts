/** Workers: the Worker and its drain, and the function worker a serverless invocation runs. */
export {
  createFunctionWorker,
  type FunctionInvocationResult,
  type FunctionWorker,
  type FunctionWorkerOptions,
  type FunctionWorkerPorts,
  type FunctionWorkerResult,
  type InvocationRequest,
} from "./function-worker.ts";
export type { NextStep } from "./invocation.ts";
export {
  type DrainOptions,
  type DrainSummary,
  type Processor,
  type StopReason,
  Worker,
  type WorkerEvents,
  type WorkerOptions,
} from "./worker.ts";
export type { WorkerSettings } from "./worker-registry.ts";
