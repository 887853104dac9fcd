// Where a page may send the browser after signing in: only to a path of this portal. Pure.

const PLACEHOLDER_ORIGIN = 'https://portal.invalid';

/**
 * safeLocalPath returns `target` as a path of this site (path, query and hash), or `fallback` when it
 * is missing or could lead elsewhere: absolute and scheme-relative URLs, backslashes (browsers read
 * `/\evil.example` as `//evil.example`), any whitespace or control character (browsers drop tabs and
 * line breaks, so `/<TAB>/evil.example` also becomes `//evil.example`), and anything the URL parser
 * resolves to another origin.
 */
export function safeLocalPath(target: string | null | undefined, fallback = '/dashboard'): string {
  if (typeof target !== 'string' || target.length === 0 || target.length > 2000) return fallback;
  if (!target.startsWith('/') || target.startsWith('//')) return fallback;
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\\\s\u0000-\u001F\u007F-\u009F]/.test(target)) return fallback;
  let url: URL;
  try {
    url = new URL(target, PLACEHOLDER_ORIGIN);
  } catch {
    return fallback;
  }
  if (url.origin !== PLACEHOLDER_ORIGIN) return fallback;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith('/') && !path.startsWith('//') ? path : fallback;
}
