// Mails as people read them: a subject, a greeting, a few paragraphs and at most one link to act on,
// in the reader's language (catalogue keys, server/i18n), as plain text and as simple HTML with the
// same words. Pure.
import { translate, type Locale, type MessageKey, type MessageParams } from '~/server/i18n';

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
}

type Line = readonly [MessageKey, MessageParams?];

export interface MailContent {
  subject: Line;
  paragraphs: readonly Line[];
  /** The one thing to do, as a link (absolute URL). */
  action?: { label: Line; url: string };
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** composeMail renders a mail's content in a locale, as text and HTML. */
export function composeMail(locale: Locale, content: MailContent): ComposedMail {
  const t = (line: Line) => translate(locale, line[0], line[1]);
  const subject = t(content.subject);
  const paragraphs = content.paragraphs.map(t);
  const footer = translate(locale, 'mail.footer');
  const action = content.action ? { label: t(content.action.label), url: content.action.url } : null;
  const text = [...paragraphs, ...(action ? [`${action.label}: ${action.url}`] : []), `-- \n${footer}`].join('\n\n') + '\n';
  const html = [
    '<!doctype html>',
    `<html lang="${locale}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; color: #0f172a; line-height: 1.5; max-width: 36rem; margin: 0 auto; padding: 1.5rem;">',
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    ...(action
      ? [
          `<p><a href="${escapeHtml(action.url)}" style="display: inline-block; background: #4338ca; color: #ffffff; padding: 0.5rem 1rem; border-radius: 0.375rem; text-decoration: none;">${escapeHtml(action.label)}</a></p>`,
          `<p style="font-size: 0.875rem; color: #475569;">${escapeHtml(action.url)}</p>`,
        ]
      : []),
    `<p style="font-size: 0.75rem; color: #64748b; border-top: 1px solid #e2e8f0; padding-top: 0.75rem;">${escapeHtml(footer)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}
