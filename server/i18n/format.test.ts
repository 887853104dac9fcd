import { describe, expect, it } from 'vitest';
import { translate } from '~/server/i18n';
import { DEFAULT_TIME_ZONE, formatBytes, formatDateTime, formatGpuHours, formatTimeIn, isTimeZoneName, roundGpuHours, timeZoneNames } from './format';

describe('GPU-hours: one rounding rule', () => {
  it.each([
    [662.66 * 3600, 663],
    [9.994 * 3600, 9.99],
    [99.94 * 3600, 99.9],
    [99.96 * 3600, 100],
    [12.345 * 3600, 12.3],
    [1.234 * 3600, 1.23],
    [0, 0],
  ])('roundGpuHours(%d s) = %d h', (gpuSeconds, hours) => {
    expect(roundGpuHours(gpuSeconds)).toBe(hours);
  });

  it.each(['en', 'de'] as const)('the estimate and the refusal show the same figure for the same amount (%s)', (locale) => {
    for (const gpuSeconds of [2_385_576, 662.66 * 3600, 45_000, 4_000, 17]) {
      const estimate = formatGpuHours(locale, gpuSeconds);
      const refusal = translate(locale, 'ledger.insufficientGpu', { needed: roundGpuHours(gpuSeconds + 3600), remaining: roundGpuHours(gpuSeconds) });
      expect(refusal).toContain(estimate);
    }
  });

  it('renders "663 GPU-h" for 662.66 GPU-hours, in both places', () => {
    expect(formatGpuHours('en', 662.66 * 3600)).toBe('663 GPU-h');
    expect(translate('en', 'ledger.insufficientGpu', { needed: 700, remaining: roundGpuHours(662.66 * 3600) })).toContain('663 GPU-h remain');
  });
});

describe('times in the reader\'s zone, naming it', () => {
  const winter = new Date('2026-12-03T13:00:00Z');
  const summer = new Date('2026-07-03T13:00:00Z');

  it.each([
    ['en', winter, 'UTC', 'Dec 3, 2026, 1:00 PM UTC'],
    ['en', winter, 'Europe/Berlin', 'Dec 3, 2026, 2:00 PM GMT+1'],
    ['en', summer, 'Europe/Berlin', 'Jul 3, 2026, 3:00 PM GMT+2'],
    ['de', winter, 'Europe/Berlin', '03.12.2026, 14:00 MEZ'],
    ['de', summer, 'Europe/Berlin', '03.07.2026, 15:00 MESZ'],
    ['en', winter, 'America/New_York', 'Dec 3, 2026, 8:00 AM EST'],
    ['en', summer, 'America/New_York', 'Jul 3, 2026, 9:00 AM EDT'],
    ['de', winter, 'Asia/Kolkata', '03.12.2026, 18:30 GMT+5:30'],
  ] as const)('%s %s in %s: %s', (locale, at, zone, expected) => {
    expect(formatDateTime(locale, at, zone).replace(/\u202f/g, ' ')).toBe(expected);
  });

  it('the night the clocks go back shows the same wall-clock hour twice, told apart by the zone', () => {
    // 2026-10-25: 02:30 CEST (00:30 UTC) and 02:30 CET (01:30 UTC) in Berlin.
    const first = formatDateTime('de', new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin');
    const second = formatDateTime('de', new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin');
    expect(first).toBe('25.10.2026, 02:30 MESZ');
    expect(second).toBe('25.10.2026, 02:30 MEZ');
  });

  it('the low-carbon suggestion names the same zone as the job page shows the begin in', () => {
    for (const zone of ['Europe/Berlin', 'America/New_York', 'UTC']) {
      for (const locale of ['en', 'de'] as const) {
        const { zone: named } = formatTimeIn(locale, winter, zone);
        expect(formatDateTime(locale, winter, zone).endsWith(` ${named}`)).toBe(true);
      }
    }
    expect(formatTimeIn('de', winter, 'Europe/Berlin')).toEqual({ time: 'Do., 14:00', zone: 'MEZ' });
  });

  it('knows the IANA zones a person may choose, and refuses others', () => {
    expect(isTimeZoneName(DEFAULT_TIME_ZONE)).toBe(true);
    expect(isTimeZoneName('UTC')).toBe(true);
    expect(isTimeZoneName('America/New_York')).toBe(true);
    expect(isTimeZoneName('Asia/Kolkata')).toBe(true); // an alias a browser reports
    for (const bad of ['', 'Mars/Olympus', 'CET+1', 'europe/berlin ']) expect(isTimeZoneName(bad)).toBe(false);
    expect(timeZoneNames()[0]).toBe('UTC');
    expect(timeZoneNames()).toContain('Europe/Berlin');
  });
});

describe('formatBytes', () => {
  it('renders sizes in decimal units with three significant digits', () => {
    expect(formatBytes('en', 0)).toBe('0 B');
    expect(formatBytes('en', 999)).toBe('999 B');
    expect(formatBytes('en', 1500)).toBe('1.5 kB');
    expect(formatBytes('en', 52_428_800)).toBe('52.4 MB');
    expect(formatBytes('en', 1_000_000_000)).toBe('1 GB');
    expect(formatBytes('de', 12_400_000_000)).toBe('12,4 GB');
    expect(formatBytes('en', 3_070_000_000_000)).toBe('3.07 TB');
  });
});
