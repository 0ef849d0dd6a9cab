/**
 * The Lambda form: one worker function per queue, each booting the Nest application context (no HTTP
 * server, so EmailController serves nothing here) once per container. `POST /send-email` is served by
 * the Nest HTTP app of main.ts.
 */
import "reflect-metadata";
import { nestWorkerHandler } from "nimbusq/nestjs";
import { AppModule } from "./app.module.js";
import { emailQueue, reportsQueue } from "./queues.js";

export const emailWorker = nestWorkerHandler(AppModule.register(), emailQueue, { jobTimeoutMs: 20_000 });
export const reportWorker = nestWorkerHandler(AppModule.register(), reportsQueue, { jobTimeoutMs: 60_000 });
