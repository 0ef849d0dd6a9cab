/**
 * `POST /send-email` → `202 { jobId, status: "queued" }` at once; a bad body → `400 { error, field }`.
 * The mail is sent later by EmailProcessor.process, where a failure retries with exponential backoff.
 */
import {
  type ArgumentsHost,
  Body,
  Catch,
  Controller,
  type ExceptionFilter,
  HttpCode,
  HttpStatus,
  Post,
  UseFilters,
} from "@nestjs/common";
// biome-ignore lint/style/useImportType: the class is needed at run time (emitDecoratorMetadata)
import { HttpAdapterHost } from "@nestjs/core";
import { ValidationError } from "nimbusq";
// biome-ignore lint/style/useImportType: the class is needed at run time (emitDecoratorMetadata)
import { EmailService, type Queued } from "./email.service.js";

/** nimbusq's ValidationError (it names the field) → 400 `{ error, field }`, whatever the HTTP platform. */
@Catch(ValidationError)
export class ValidationErrorFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: ValidationError, host: ArgumentsHost): void {
    const response: unknown = host.switchToHttp().getResponse();
    this.adapterHost.httpAdapter.reply(
      response,
      { error: error.message, field: error.field },
      HttpStatus.BAD_REQUEST,
    );
  }
}

@Controller()
@UseFilters(ValidationErrorFilter)
export class EmailController {
  constructor(private readonly emails: EmailService) {}

  @Post("send-email")
  @HttpCode(HttpStatus.ACCEPTED)
  async sendEmail(@Body() body: unknown): Promise<Queued> {
    return await this.emails.sendEmail(body);
  }
}
