import { describe, expect, it } from 'vitest';
import { safeLocalPath } from './redirect';

describe('safeLocalPath', () => {
  it('keeps paths of this site with their query and hash', () => {
    expect(safeLocalPath('/jobs')).toBe('/jobs');
    expect(safeLocalPath('/invitations/abc_DEF-123?x=1#top')).toBe('/invitations/abc_DEF-123?x=1#top');
    expect(safeLocalPath('/usage?month=2026-11')).toBe('/usage?month=2026-11');
  });

  it('refuses every way off the site', () => {
    const attacks = [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example/',
      '\\\\evil.example',
      '/\t/evil.example',
      '/\n/evil.example',
      '/\r/evil.example',
      ' //evil.example',
      '/%09/evil.example'.replace('%09', '\t'), // the page receives the decoded value
      'javascript:alert(1)',
      'evil.example',
      '/\u0000//evil.example',
      '/\u2028/evil.example',
      '',
      undefined,
      null,
    ];
    for (const attack of attacks) expect(safeLocalPath(attack as string | undefined), JSON.stringify(attack)).toBe('/dashboard');
  });

  it('keeps an encoded tab harmless: it stays inside the path', () => {
    expect(safeLocalPath('/%09/evil.example')).toBe('/%09/evil.example');
  });

  it('uses the fallback given', () => {
    expect(safeLocalPath('//evil.example', '/sign-in')).toBe('/sign-in');
  });
});
