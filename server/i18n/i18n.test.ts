import { describe, expect, it } from 'vitest';
import { de } from './de';
import { en } from './en';
import { interpolate, negotiateLocale, translate } from './index';

describe('negotiateLocale', () => {
  it.each([
    [undefined, 'de-DE,de;q=0.9,en;q=0.8', 'de'],
    [undefined, 'fr-FR,fr;q=0.9,en;q=0.5', 'en'],
    [undefined, 'fr-FR,de;q=0.7,en;q=0.5', 'de'],
    [undefined, undefined, 'en'],
    ['de', 'en-GB', 'de'],
    ['xx', 'de', 'de'],
  ] as const)('cookie %s, Accept-Language %s → %s', (cookie, header, expected) => {
    expect(negotiateLocale(cookie, header)).toBe(expected);
  });
});

describe('catalogues', () => {
  it('translate every English key into German with the same placeholders', () => {
    // A plural block's branches are words, not placeholders: count the block's own name instead.
    const placeholders = (s: string) => [...new Set([...s.matchAll(/(?<!(?:zero|one|two|few|many|other|=\d+) )\{(\w+)(?:\}|, plural,)/g)].map((m) => m[1]))].sort();
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect(de[key], key).toBeTruthy();
      expect(placeholders(de[key]), key).toEqual(placeholders(en[key]));
    }
  });
  it('fill placeholders and leave unknown ones visible', () => {
    expect(interpolate('{a} and {b}', { a: 1 })).toBe('1 and {b}');
    expect(translate('de', 'dashboard.welcome', { name: 'Ada' })).toBe('Willkommen, Ada.');
  });
});

describe('the catalogues stay on the server', () => {
  it('no client component imports server/i18n itself (its catalogues would go to every page): core.ts is theirs', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const path = await import('node:path');
    const root = path.resolve(import.meta.dirname, '../../app');
    const files = (await readdir(root, { recursive: true })).filter((f) => /\.tsx?$/.test(f)).map((f) => path.join(root, f));
    const offenders: string[] = [];
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      if (!/^\s*['"]use client['"]/m.test(text.slice(0, 400))) continue;
      if (/from '~\/server\/i18n'|from '~\/server\/i18n\/(en|de)'/.test(text.replace(/import type [^;]+;/g, ''))) offenders.push(path.relative(root, file));
    }
    expect(files.length).toBeGreaterThan(100);
    expect(offenders).toEqual([]);
  });
});
