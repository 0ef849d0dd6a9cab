/**
 * The Lambda form: one worker function per queue, each booting the Nest application context (no HTTP
 * server, so EmailController serves nothing here) once per container. `POST /send-email` is served by
 * the Nest HTTP app of main.ts.
 */
import "reflect-metadata";
import { nestWorkerHandler } from "../../../nestjs/index.ts";
import { AppModule } from "./app.module.ts";

export const emailWorker = nestWorkerHandler(AppModule.register(), "email", { jobTimeoutMs: 20_000 });
export const reportWorker = nestWorkerHandler(AppModule.register(), "reports", { jobTimeoutMs: 60_000 });
