/**
 * The example's module: the shared nimbusq configuration (from the environment unless given), the
 * email and reports queues, their processors, the services that enqueue and the HTTP controller.
 */
import { type DynamicModule, Module } from "@nestjs/common";
import { NimbusqModule, type NimbusqRootOptions } from "../../../nestjs/index.ts";
import { EmailController } from "./email.controller.ts";
import { EmailProcessor } from "./email.processor.ts";
import { EmailService } from "./email.service.ts";
import { MailTransport } from "./mail-transport.ts";
import { ReportProcessor, ReportScheduler, ReportStore } from "./report.ts";

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module with a static factory
export class AppModule {
  /** `AppModule.register()` reads UPSTASH_REDIS_REST_URL/TOKEN; tests pass a client and a prefix. */
  static register(nimbusq: NimbusqRootOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        NimbusqModule.forRoot(nimbusq),
        NimbusqModule.registerQueue({ name: "email" }, { name: "reports" }),
      ],
      controllers: [EmailController],
      providers: [MailTransport, EmailService, EmailProcessor, ReportStore, ReportScheduler, ReportProcessor],
    };
  }
}
