import { describe, expect, it } from 'vitest';
import { de } from './de';
import { en } from './en';
import { translate, type MessageKey } from './index';
import { expandPlurals, pluralBranches } from './plural';

const catalogues = { en, de } as const;

describe('plural blocks', () => {
  it.each([
    ['en', 1, '1 session'],
    ['en', 2, '2 sessions'],
    ['en', 0, '0 sessions'],
    ['de', 1, '1 Sitzung'],
    ['de', 1500, '1.500 Sitzungen'],
  ] as const)('%s: count %d → %s', (locale, count, expected) => {
    const format = (n: number) => new Intl.NumberFormat(locale).format(n);
    const word = locale === 'en' ? '{count, plural, one {# session} other {# sessions}}' : '{count, plural, one {# Sitzung} other {# Sitzungen}}';
    expect(expandPlurals(word, { count }, locale, format)).toBe(expected);
  });

  it('prefers an exact =N branch, keeps other placeholders, and leaves a block without its count alone', () => {
    const message = '{n, plural, =0 {no jobs} one {# job of {who}} other {# jobs of {who}}}';
    expect(expandPlurals(message, { n: 0 }, 'en', String)).toBe('no jobs');
    expect(expandPlurals(message, { n: 1 }, 'en', String)).toBe('1 job of {who}');
    expect(expandPlurals(message, {}, 'en', String)).toBe(message);
    expect(expandPlurals(message, { n: '12,5' }, 'en', String)).toBe('12,5 jobs of {who}');
  });

  it('refuses malformed bodies', () => {
    expect(pluralBranches('one {x}')).toBeNull();
    expect(pluralBranches('one {x} other {y')).toBeNull();
    expect(pluralBranches('some {x} other {y}')).toBeNull();
  });
});

describe('counted words in the catalogues', () => {
  it('use plural rules, never a fake plural such as "minute(s)" or "Minute(n)"', () => {
    for (const [locale, messages] of Object.entries(catalogues)) {
      for (const [key, text] of Object.entries(messages)) expect(text, `${locale} ${key}`).not.toMatch(/\p{L}\((s|e|n|en|es|er)\)/u);
    }
  });

  it('count with a plural block wherever a placeholder stands before a counted word ("1 GPUs", "1 Tage")', () => {
    const counted = /\{\w+\} (GPUs|nodes|jobs|days|hours|minutes|members|projects|invoices|sessions|Jobs|Tage|Tagen|Stunden|Minuten|Mitglieder|Projekte|Rechnungen|Sitzungen)\b/u;
    for (const [locale, messages] of Object.entries(catalogues)) {
      for (const [key, text] of Object.entries(messages)) expect(text, `${locale} ${key}`).not.toMatch(counted);
    }
  });

  it('give every plural block a form for one and for other, in both languages', () => {
    for (const [locale, messages] of Object.entries(catalogues)) {
      for (const [key, text] of Object.entries(messages)) {
        for (const match of text.matchAll(/\{(\w+), plural,/g)) {
          let depth = 0;
          let end = match.index;
          for (; end < text.length; end++) if (text[end] === '{') depth++; else if (text[end] === '}' && --depth === 0) break;
          const branches = pluralBranches(text.slice(match.index + match[0].length, end));
          expect(branches && Object.keys(branches).sort(), `${locale} ${key}`).toEqual(['one', 'other']);
        }
      }
    }
  });

  it.each<[MessageKey, Record<string, number | string>, string, string]>([
    ['signIn.lockedOut', { minutes: 1 }, 'locked for 1 minute;', 'für 1 Minute gesperrt'],
    ['jobs.fit.walltimeFits', { walltime: '17 h', gpus: 1, left: '€50' }, 'on 1 GPU fits', 'auf 1 GPU passen'],
    ['jobs.fit.walltimeFits', { walltime: '17 h', gpus: 2, left: '€50' }, 'on 2 GPUs fits', 'auf 2 GPUs passen'],
    ['job.overPowerCap', { requested: 2, capKw: 1, max: 1 }, 'At most 1 GPU fits', 'Höchstens 1 GPU passt'],
    ['jobs.gpusAtOnceNow', { inUse: 0, limit: 1 }, '0 of 1 GPU at once', '0 von 1 gleichzeitig erlaubten GPU belegt'],
    ['checklist.priceListHint', { credit: '€1,000', days: 1 }, 'for 1 day with', 'für 1 Tag mit'],
    ['signIn.lockedOut', { minutes: 2 }, 'locked for 2 minutes;', 'für 2 Minuten gesperrt'],
    ['error.rateLimited', { minutes: 1 }, 'wait 1 minute and', 'warten Sie 1 Minute und'],
    ['jobs.nodeCount', { nodes: 1 }, '1 node', '1 Knoten'],
    ['jobs.nodeCount', { nodes: 2 }, '2 nodes', '2 Knoten'],
    ['staff.sessions.ended', { count: 1, email: 'a@b.example' }, '1 session of a@b.example was ended.', '1 Sitzung von a@b.example wurde beendet.'],
    ['staff.sessions.ended', { count: 3, email: 'a@b.example' }, '3 sessions of a@b.example were ended.', '3 Sitzungen von a@b.example wurden beendet.'],
    ['notice.allocationsExpiring', { count: 1, project: 'P', days: 1 }, '1 allocation ends soon; the first, of P, has 1 day left.', '1 Zuteilung endet bald; die erste, von P, hat noch 1 Tag.'],
    ['notice.allocationsExpiring', { count: 2, project: 'P', days: 5 }, '2 allocations end soon; the first, of P, has 5 days left.', '2 Zuteilungen enden bald; die erste, von P, hat noch 5 Tage.'],
    ['notifications.bell', { count: 1 }, '1 unread notification', '1 ungelesene Benachrichtigung'],
  ])('%s with %o reads right in English and German', (key, params, english, german) => {
    expect(translate('en', key, params)).toContain(english);
    expect(translate('de', key, params)).toContain(german);
  });
});
