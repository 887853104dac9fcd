// The session proxy's own answers (sessions-http.ts): a short page in the reader's language for each
// way a session cannot be opened, with the portal's security headers and a policy that allows no
// script at all. They never name whose session it is, and carry nothing of the app.
import type { ServerResponse } from 'node:http';
import { translate, type Locale, type MessageKey } from '~/server/i18n';
import { securityHeaders } from '~/server/security-headers';

/** The proxy's answers of its own, by what happened. */
export type SessionPage = 'notFound' | 'starting' | 'ended' | 'unreachable' | 'signIn' | 'crossSite' | 'busy';

const STATUS: Record<SessionPage, number> = { notFound: 404, starting: 503, ended: 410, unreachable: 502, signIn: 401, crossSite: 403, busy: 503 };

/** How long a browser waits before asking a starting session again (Retry-After, and the page's own reload). */
export const RETRY_SECONDS = 5;

/** statusOfPage is the HTTP status each page is answered with. */
export function statusOfPage(page: SessionPage): number {
  return STATUS[page];
}

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 410: 'Gone', 502: 'Bad Gateway', 503: 'Service Unavailable' };

/** statusLine is the first line of a refusal written straight to an upgrade's socket. */
export function statusLine(page: SessionPage): string {
  const status = STATUS[page];
  return `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** renderPage is the HTML of a page; `jobId` (already checked to be the caller's) adds a link to the job, `signInPath` a sign-in link. */
export function renderPage(page: SessionPage, locale: Locale, links: { jobId?: string; signInPath?: string } = {}): string {
  const t = (key: MessageKey) => escapeHtml(translate(locale, key));
  const link = links.signInPath
    ? `<p><a href="${escapeHtml(links.signInPath)}">${t('sessionProxy.signInLink')}</a></p>`
    : links.jobId
      ? `<p><a href="/jobs/${escapeHtml(links.jobId)}">${t('sessionProxy.toJob')}</a></p>`
      : '';
  // A starting session reloads by itself (no script: the policy allows none).
  const refresh = page === 'starting' ? `<meta http-equiv="refresh" content="${RETRY_SECONDS}">` : '';
  return `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}<title>${t(`sessionProxy.${page}.title`)} · ${t('app.name')}</title><style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#111827;line-height:1.5}a{color:#4338ca}</style></head><body><main><h1>${t(`sessionProxy.${page}.title`)}</h1><p>${t(`sessionProxy.${page}.text`)}</p>${link}</main></body></html>`;
}

/** sendPage answers a request with one of the proxy's pages (no body for HEAD). */
export function sendPage(res: ServerResponse, method: string | undefined, page: SessionPage, locale: Locale, options: { https: boolean; jobId?: string; signInPath?: string; extraHeaders?: Record<string, string> }): void {
  const body = renderPage(page, locale, options);
  res.writeHead(STATUS[page], {
    ...securityHeaders({ https: options.https }),
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...(page === 'starting' || page === 'busy' ? { 'retry-after': String(RETRY_SECONDS) } : {}),
    ...options.extraHeaders,
  });
  res.end(method === 'HEAD' ? undefined : body);
}
