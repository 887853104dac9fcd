// Security headers on every answer (issue #9). Pages get a strict Content-Security-Policy with a
// fresh nonce per request (Next.js's documented pattern: the nonce in the request's CSP header is put
// on Next's own scripts); API answers a policy that allows nothing. The rules live in
// server/security-headers.ts.
import { NextResponse, type NextRequest } from 'next/server';
import { apiSecurityHeaders, pageContentSecurityPolicy, securityHeaders } from '~/server/security-headers';

export function proxy(request: NextRequest) {
  const https = (process.env.PORTAL_URL ?? '').startsWith('https://');
  if (request.nextUrl.pathname.startsWith('/api/')) {
    const response = NextResponse.next();
    for (const [name, value] of Object.entries(apiSecurityHeaders({ https }))) response.headers.set(name, value);
    return response;
  }
  const nonce = Buffer.from(crypto.randomUUID()).toString('base64');
  const csp = pageContentSecurityPolicy(nonce, { development: process.env.NODE_ENV === 'development', https });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set('x-nonce', nonce);
  requestHeaders.set('content-security-policy', csp);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set('content-security-policy', csp);
  for (const [name, value] of Object.entries(securityHeaders({ https }))) response.headers.set(name, value);
  return response;
}

export const config = {
  // Everything but Next's own static files (they carry no user data and are cached for a year) and the
  // upload routes: a request through the proxy has its body buffered (10 MB at most), an upload streams
  // gigabytes; those routes set the API's headers themselves (server/api/uploads-http.ts).
  matcher: ['/((?!_next/static|_next/image|favicon.ico|api/uploads|api/v1/uploads).*)'],
};
