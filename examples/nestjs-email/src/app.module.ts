/**
 * The example's module: the shared nimbusq configuration (from the environment unless given), the
 * email and reports queues, their processors, the services that enqueue and the HTTP controller.
 */
import { type DynamicModule, Module } from "@nestjs/common";
import { NimbusqModule, type NimbusqRootOptions } from "nimbusq/nestjs";
import { EmailController } from "./email.controller.js";
import { EmailProcessor } from "./email.processor.js";
import { EmailService } from "./email.service.js";
import { MailTransport } from "./mail-transport.js";
import { emailQueue, reportsQueue } from "./queues.js";
import { ReportProcessor, ReportScheduler, ReportStore } from "./report.js";

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module with a static factory
export class AppModule {
  /** `AppModule.register()` reads UPSTASH_REDIS_REST_URL/TOKEN; tests pass a client and a prefix. */
  static register(nimbusq: NimbusqRootOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        NimbusqModule.forRoot(nimbusq),
        NimbusqModule.registerQueue({ name: emailQueue }, { name: reportsQueue }),
      ],
      controllers: [EmailController],
      providers: [MailTransport, EmailService, EmailProcessor, ReportStore, ReportScheduler, ReportProcessor],
    };
  }
}
