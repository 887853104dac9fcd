// What the tRPC endpoint checks before it reads a request (issue #9): mutations only from the portal's
// own pages (Origin), bodies of a bounded size (413 before parsing), and the answers it gives when it
// refuses, in the shape the tRPC client reads.
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { translate, type Locale, type MessageKey } from '~/server/i18n';

/** Largest request body read (job scripts are at most 100,000 characters; environments 50 × 4 KiB). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Most calls in one batched request (the portal's client sends at most 10). */
export const MAX_BATCH_SIZE = 20;

/**
 * originAllowed tells whether a state-changing request may come from where the browser says it comes
 * from: no Origin header (a script or the command line, which carry no victim's cookie) unless the
 * browser marks it cross-site; otherwise the request's own origin or PORTAL_URL's.
 */
export function originAllowed(headers: Headers, requestUrl: string, portalUrl: string | undefined): boolean {
  const origin = headers.get('origin');
  if (!origin) return headers.get('sec-fetch-site') !== 'cross-site';
  if (origin === 'null') return false;
  const allowed = new Set<string>([new URL(requestUrl).origin]);
  const host = headers.get('x-forwarded-host') ?? headers.get('host');
  if (host) {
    const proto = headers.get('x-forwarded-proto') ?? new URL(requestUrl).protocol.replace(':', '');
    allowed.add(`${proto}://${host}`);
  }
  if (portalUrl) allowed.add(new URL(portalUrl).origin);
  return allowed.has(origin);
}

/** A refusal in tRPC's error shape (one per call of a batch), so the client shows the message. */
export function refusal(locale: Locale, status: 403 | 413, key: MessageKey, batched: number): Response {
  const code = status === 403 ? 'FORBIDDEN' : 'PAYLOAD_TOO_LARGE';
  const error = { error: { json: { message: translate(locale, key), code: TRPC_ERROR_CODES_BY_KEY[code], data: { code, httpStatus: status } } } };
  return new Response(JSON.stringify(batched > 0 ? Array.from({ length: batched }, () => error) : error), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** readBody reads a request body up to `max` bytes; null when it is larger (read no further). */
export async function readBody(request: Request, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = Number(request.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > max) return null;
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}
