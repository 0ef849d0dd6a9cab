/**
 * The package's entry under Node (`exports["."].node`): everything of core's index, with processor
 * files (BullMQ's sandboxed processors) running in worker threads.
 */
import "./register.ts";

export * from "../core/index.ts";
