// The mail transport on SMTP (nodemailer), from SMTP_URL: smtp:// (STARTTLS when the server offers it)
// or smtps:// (TLS from the start), with user and password in the URL if the server wants them.
import nodemailer from 'nodemailer';
import type { MailTransport } from '~/server/core/mail/delivery';

/** How long one message may take (connect, greet, send) before the attempt counts as failed. */
const TIMEOUT_MS = 20_000;

/** createSmtpTransport returns a transport that sends through the SMTP server at `url`. */
export function createSmtpTransport(url: string): MailTransport & { close(): void } {
  const transporter = nodemailer.createTransport(url, { connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS });
  return {
    async send(message) {
      const attachments = message.attachments?.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(a.content) }));
      const info = await transporter.sendMail({ from: message.from, to: message.to, subject: message.subject, text: message.text, html: message.html, attachments });
      return { messageId: info.messageId };
    },
    close: () => transporter.close(),
  };
}
