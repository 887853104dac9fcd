import { describe, expect, it } from 'vitest';
import { catalogueAnswer, catalogueUrl } from './catalogue-file';
import { de } from './de';
import { en } from './en';
import { serverCatalogue } from './index';

describe('the catalogue file a browser fetches', () => {
  it('is the locale’s whole catalogue under a name that carries its hash, kept a year', () => {
    for (const [locale, messages] of [['en', en], ['de', de]] as const) {
      const url = catalogueUrl(locale);
      expect(url).toMatch(new RegExp(`^/api/i18n/${locale}\\.[0-9a-f]{16}\\.json$`));
      const answer = catalogueAnswer(url.split('/').pop()!)!;
      expect(JSON.parse(answer.body)).toEqual(messages);
      expect(answer.cacheControl).toBe('public, max-age=31536000, immutable');
    }
    expect(catalogueUrl('en')).not.toBe(catalogueUrl('de'));
  });

  it('answers an older hash with the current catalogue, not kept; an unknown name with nothing', () => {
    const older = catalogueAnswer('de.0123456789abcdef.json')!;
    expect(JSON.parse(older.body)).toEqual(de);
    expect(older.cacheControl).toBe('no-cache');
    for (const name of ['fr.0123456789abcdef.json', 'en.json', 'en.0123456789abcdef.js', '../en.0123456789abcdef.json', 'en.0123456789ABCDEF.json']) expect(catalogueAnswer(name)).toBeUndefined();
  });

  it('is what client components rendered on the server read', () => {
    expect(serverCatalogue('de')).toBe(de);
    expect(serverCatalogue('en')).toBe(en);
  });
});
