// The security headers of the portal's answers (set by proxy.ts). Pure.

/** Headers every answer carries. HSTS only when the portal is served over https (PORTAL_URL). */
export function securityHeaders(options: { https: boolean }): Record<string, string> {
  return {
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=(), browsing-topics=()',
    'cross-origin-opener-policy': 'same-origin',
    ...(options.https ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

/** API answers are data, never documents: a policy that allows nothing, plus the common headers. */
export function apiSecurityHeaders(options: { https: boolean }): Record<string, string> {
  return { ...securityHeaders(options), 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" };
}

/**
 * pageContentSecurityPolicy is a page's policy: scripts only with this request's nonce (and what they
 * load, 'strict-dynamic'), styles from the portal or with the nonce, style attributes allowed (the
 * charts size their bars with them), no plugins, no framing, forms and links to the portal only.
 * Development adds 'unsafe-eval', which React's development build needs for its error overlay.
 */
export function pageContentSecurityPolicy(nonce: string, options: { development: boolean; https: boolean }): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${options.development ? " 'unsafe-eval'" : ''}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(options.https ? ['upgrade-insecure-requests'] : []),
  ].join('; ');
}
