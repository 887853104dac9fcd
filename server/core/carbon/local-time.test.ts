import { describe, expect, it } from 'vitest';
import { isTimeZone, localHourAt } from './local-time';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('localHourAt', () => {
  it.each([
    ['Europe/Berlin, winter (UTC+1)', 'Europe/Berlin', '2026-01-15T12:30:00Z', 0, 13, '2026-01-15T13:00:00Z'],
    ['Europe/Helsinki, winter (UTC+2)', 'Europe/Helsinki', '2026-01-15T12:30:00Z', 0, 14, '2026-01-15T13:00:00Z'],
    ['Europe/Berlin, summer (UTC+2)', 'Europe/Berlin', '2026-07-01T21:59:59Z', 6, 23, '2026-07-01T22:00:00Z'],
    ['the local month turns before UTC does', 'Europe/Zurich', '2026-01-31T23:10:00Z', 1, 0, '2026-02-01T00:00:00Z'],
    ['before the spring-forward gap: 01:xx CET', 'Europe/Berlin', '2026-03-29T00:30:00Z', 2, 1, '2026-03-29T01:00:00Z'],
    ['after it: 03:00 CEST', 'Europe/Berlin', '2026-03-29T01:00:00Z', 2, 3, '2026-03-29T02:00:00Z'],
    ['a half-hour offset', 'Asia/Kolkata', '2026-01-15T12:00:00Z', 0, 17, '2026-01-15T12:30:00Z'],
  ])('%s', (_, zone, iso, month, hour, next) => {
    expect(localHourAt(zone, at(iso))).toEqual({ month, hour, nextHourSeconds: at(next) });
  });

  it('knows real zone names and refuses made-up ones', () => {
    expect(isTimeZone('Europe/Helsinki')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
