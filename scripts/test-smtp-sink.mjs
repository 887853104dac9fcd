#!/usr/bin/env node
// A real SMTP server for the browser tests: it takes every mail the portal's worker sends (the
// smtp-server package, as server/testing/smtp-sink.ts does for the integration tests), parses it
// (mailparser) and keeps it in memory, and shows what it got over a small HTTP endpoint, so a journey
// reads the mail a person would get and opens the link in it.
//   SMTP on TEST_SMTP_PORT (default 2526); HTTP on TEST_SMTP_HTTP_PORT (default 3902):
//   GET /messages?to=address → [{ to, subject, text, html }] (oldest first; all without `to`)
//   DELETE /messages → forgets them all;  GET /health → ok
import http from 'node:http';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const smtpPort = Number(process.env.TEST_SMTP_PORT ?? 2526);
const httpPort = Number(process.env.TEST_SMTP_HTTP_PORT ?? 3902);
/** @type {{ to: string[]; subject: string; text: string; html: string; receivedAt: string }[]} */
let received = [];

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  // Test mails are small; a runaway one should not fill the memory.
  size: 5 * 1024 * 1024,
  onData(stream, session, callback) {
    simpleParser(stream)
      .then((parsed) => {
        received.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          subject: parsed.subject ?? '',
          text: parsed.text ?? '',
          html: typeof parsed.html === 'string' ? parsed.html : '',
          receivedAt: new Date().toISOString(),
        });
        callback();
      })
      .catch((error) => callback(error));
  },
});
smtp.on('error', (error) => console.error('[smtp-sink]', error.message));

const web = http.createServer((request, response) => {
  const url = new URL(request.url ?? '/', `http://127.0.0.1:${httpPort}`);
  const reply = (status, body) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (url.pathname === '/health') return reply(200, { ok: true, received: received.length });
  if (url.pathname !== '/messages') return reply(404, { error: 'not found' });
  if (request.method === 'DELETE') {
    received = [];
    return reply(200, { ok: true });
  }
  if (request.method !== 'GET') return reply(405, { error: 'GET or DELETE' });
  const to = url.searchParams.get('to')?.toLowerCase();
  return reply(200, (to ? received.filter((m) => m.to.includes(to)) : received).map(({ to: rcpt, subject, text, html }) => ({ to: rcpt, subject, text, html })));
});

smtp.listen(smtpPort, '127.0.0.1', () => {
  web.listen(httpPort, '127.0.0.1', () => console.log(`[smtp-sink] SMTP on 127.0.0.1:${smtpPort}, messages on http://127.0.0.1:${httpPort}/messages`));
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    web.close();
    smtp.close(() => process.exit(0));
  });
}
