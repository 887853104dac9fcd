// The rules of sending a mail from the outbox: how long to wait after a failed attempt, when to give up,
// and which failures are final. Pure; the outbox service (server/services/mail/mail.ts) applies them.

/**
 * A file a mail carries, named in the outbox and rendered only when the mail is sent (an invoice's PDF
 * is tens of kilobytes; the outbox keeps the reference). `locale` is the reader's language.
 */
export type MailAttachmentRef = { kind: 'invoice-pdf'; invoiceId: string; locale: string };

/** A rendered attachment, as the transport sends it. */
export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
}

/** What the portal hands its mail transport: one message to one recipient. */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments?: MailAttachment[];
}

/** MailTransport sends one message and answers the id the server gave it; it throws when the server did not take it. */
export interface MailTransport {
  send(message: MailMessage): Promise<{ messageId: string }>;
}

/** After this many attempts a mail is given up (failed) even if every failure looked temporary: about two days of tries. */
export const MAX_MAIL_ATTEMPTS = 12;

/** The first retry waits this long; each further one twice as long, up to MAX_RETRY_DELAY_MS. */
export const FIRST_RETRY_DELAY_MS = 60_000;
export const MAX_RETRY_DELAY_MS = 6 * 3600_000;

/** retryDelayMs is how long to wait after the `attempts`-th failed attempt (1 = the first): 1, 2, 4 … minutes, at most 6 h. */
export function retryDelayMs(attempts: number): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 30));
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** exponent, MAX_RETRY_DELAY_MS);
}

/**
 * isPermanentMailError tells a refusal that no retry can mend — the server answered 5xx (no such
 * recipient, message refused) — from trouble that may pass (connection refused, timeout, 4xx greylisting).
 */
export function isPermanentMailError(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { responseCode?: unknown }).responseCode : undefined;
  return typeof code === 'number' && code >= 500 && code < 600;
}

/** What becomes of a mail after a failed attempt. */
export function afterFailure(attempts: number, error: unknown, now: Date): { status: 'pending' | 'failed'; nextAttemptAt: Date } {
  const final = isPermanentMailError(error) || attempts >= MAX_MAIL_ATTEMPTS;
  return { status: final ? 'failed' : 'pending', nextAttemptAt: new Date(now.getTime() + (final ? 0 : retryDelayMs(attempts))) };
}
