/** Under Node, processor files run in worker threads (imported for its effect by the Node entries). */
import { setSandboxFactory } from "../core/internal.ts";
import { threadSandbox } from "./thread-pool.ts";

setSandboxFactory(threadSandbox);
