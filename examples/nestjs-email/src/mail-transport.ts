/**
 * A stand-in for an SMTP/SES client: it "sends" by recording, and refuses recipients that match
 * `failPattern` for their first `failTimes` sends (a mail server's temporary refusal), so retries show.
 */
import { Injectable } from "@nestjs/common";

export interface SentMail {
  to: string;
  subject: string;
}

@Injectable()
export class MailTransport {
  failPattern = /flaky/;
  failTimes = 2;
  readonly sent: SentMail[] = [];
  private readonly refusals = new Map<string, number>();

  async send(mail: SentMail): Promise<{ messageId: string }> {
    if (this.failPattern.test(mail.to)) {
      const refused = this.refusals.get(mail.to) ?? 0;
      if (refused < this.failTimes) {
        this.refusals.set(mail.to, refused + 1);
        throw new Error(`421 ${mail.to}: try again later`);
      }
    }
    this.sent.push(mail);
    return { messageId: `msg-${this.sent.length}` };
  }
}
