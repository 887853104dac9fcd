// A real SMTP server for the tests (the smtp-server package) that keeps every message it receives,
// parsed (mailparser), so a test reads the mail the portal sent as a mail client would. It can be
// stopped and started again on the same port, to play an SMTP server that is away.
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  attachments: { filename: string; contentType: string; content: Buffer }[];
}

export interface SmtpSink {
  /** smtp://127.0.0.1:PORT, for SMTP_URL. */
  url: string;
  port: number;
  received: ReceivedMail[];
  /** waitFor resolves once `count` mails in all have arrived (or rejects after timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
  /** start listens again (on the same port) after stop. */
  start(): Promise<void>;
}

/** startSmtpSink starts a sink on a free port (or the one given). */
export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  let server: SMTPServer | null = null;
  let listening = port;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS'],
        logger: false,
        onData(stream, session, callback) {
          simpleParser(stream)
            .then((parsed) => {
              const to = session.envelope.rcptTo.map((r) => r.address);
              received.push({
                to,
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                subject: parsed.subject ?? '',
                text: parsed.text ?? '',
                html: typeof parsed.html === 'string' ? parsed.html : '',
                messageId: parsed.messageId ?? '',
                attachments: parsed.attachments.map((a) => ({ filename: a.filename ?? '', contentType: a.contentType, content: a.content })),
              });
              callback();
            })
            .catch((error: Error) => callback(error));
        },
      });
      s.on('error', () => undefined);
      s.listen(listening, '127.0.0.1', () => {
        listening = (s.server.address() as AddressInfo).port;
        server = s;
        resolve();
      });
      s.server.once('error', reject);
    });
  await listen();
  return {
    get url() {
      return `smtp://127.0.0.1:${listening}`;
    },
    get port() {
      return listening;
    },
    received,
    async waitFor(count, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`the SMTP sink got ${received.length} mail(s), expected ${count}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return received;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        const s = server;
        server = null;
        if (!s) return resolve();
        s.close(() => resolve());
      }),
    start: () => (server ? Promise.resolve() : listen()),
  };
}
