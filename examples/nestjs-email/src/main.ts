/**
 * The long-running form (a container): the Nest HTTP app serves `POST /send-email` (EmailController,
 * on @nestjs/platform-express) while the processors run (autorun). SIGTERM closes the app: the HTTP
 * server stops, leased-but-unstarted jobs go back to the queue and running ones finish.
 */
import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { AppModule } from "./app.module.ts";
import { ReportScheduler } from "./report.ts";

const app = await NestFactory.create(AppModule.register());
app.enableShutdownHooks();
await app.get(ReportScheduler).scheduleDailyReport();
await app.listen(Number(process.env.PORT ?? 3000));
