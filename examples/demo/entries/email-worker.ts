/** Lambda entry of the demo `email` queue's worker: a flaky mail send, retried with backoff. */
import { demoWorkerHandler } from "../demo-worker.ts";

export const handler = demoWorkerHandler("email");
