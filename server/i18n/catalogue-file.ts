// The catalogue a browser reads: one locale's messages as a JSON file whose name carries a hash of its
// content (`/api/i18n/<locale>.<hash>.json`), fetched once and then kept by the browser for a year. Until
// issue #30 the root layout passed the catalogue to the client components as a prop, so every page
// carried 125–139 k characters of it in its HTML and its server spent about 10 ms of CPU a page
// serialising it (`npm run bench:http`, "Where a request's time goes").
import { createHash } from 'node:crypto';
import { isLocale, type Locale } from './core';
import { messagesFor } from './index';

interface CatalogueFile {
  body: string;
  version: string;
}

const files = new Map<Locale, CatalogueFile>();

function fileOf(locale: Locale): CatalogueFile {
  let file = files.get(locale);
  if (!file) {
    const body = JSON.stringify(messagesFor(locale));
    file = { body, version: createHash('sha256').update(body).digest('hex').slice(0, 16) };
    files.set(locale, file);
  }
  return file;
}

/** catalogueUrl is the address of a locale's catalogue file (it changes when a message does). */
export function catalogueUrl(locale: Locale): string {
  return `/api/i18n/${locale}.${fileOf(locale).version}.json`;
}

/**
 * catalogueAnswer answers `GET /api/i18n/<name>`: the named locale's catalogue, kept a year when the hash is
 * the current one; under an older hash (a page of the build before) the current catalogue, not kept. An
 * unknown name is undefined (404).
 */
export function catalogueAnswer(name: string): { body: string; cacheControl: string } | undefined {
  const match = /^([a-z]{2})\.([0-9a-f]{16})\.json$/.exec(name);
  if (!match || !isLocale(match[1])) return undefined;
  const file = fileOf(match[1]);
  return { body: file.body, cacheControl: match[2] === file.version ? 'public, max-age=31536000, immutable' : 'no-cache' };
}

