/**
 * The long-running form (a container): processors run while the app lives (autorun); SIGTERM closes
 * the app, which hands leased-but-unstarted jobs back and lets running ones finish.
 */
import "reflect-metadata";
import { serve } from "@hono/node-server";
import { NestFactory } from "@nestjs/core";
import { AppModule } from "./app.module.ts";
import { createHttpApp } from "./http.ts";
import { ReportScheduler } from "./report.ts";

const app = await NestFactory.createApplicationContext(AppModule.register());
app.enableShutdownHooks();
await app.get(ReportScheduler).scheduleDailyReport();
const server = serve({ fetch: createHttpApp(app).fetch, port: Number(process.env.PORT ?? 3000) });
process.once("SIGTERM", () => server.close());
