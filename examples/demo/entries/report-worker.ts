/** Lambda entry of the demo `report` queue's worker: reports built in steps, with progress and logs. */
import { demoWorkerHandler } from "../demo-worker.ts";

export const handler = demoWorkerHandler("report");
