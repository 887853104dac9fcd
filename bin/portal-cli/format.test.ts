import { describe, expect, it } from 'vitest';
import { amount, bytes, dateTime, duration, euros, gpuHours, keyValues, kwh, table } from './format.mjs';

describe('figures with units', () => {
  it.each([
    [gpuHours(4 * 3600), '4 GPU-h'],
    [gpuHours(5400), '1.5 GPU-h'],
    [gpuHours(45 * 3600 + 360), '45.1 GPU-h'],
    [gpuHours(1234.4 * 3600), '1,234 GPU-h'],
    [gpuHours(null), '–'],
    [euros(720), '€7.20'],
    [euros(123456789), '€1,234,567.89'],
    [kwh(2750), '2.8 kWh'],
    [kwh(1234500), '1,234.5 kWh'],
    [amount('cents', 180), '€1.80'],
    [amount('gpu_seconds', 7200), '2 GPU-h'],
    [duration(90 * 60), '1h 30m'],
    [duration(2 * 86400 + 3 * 3600), '2d 3h'],
    [duration(45), '45s'],
    [dateTime('2026-12-02T08:05:09.123Z'), '2026-12-02 08:05:09 UTC'],
    [dateTime('2026-12-02T08:05:09.123Z', { short: true }), '2026-12-02 08:05'],
    [dateTime(null), '–'],
    [bytes(0), '0 B'],
    [bytes(999), '999 B'],
    [bytes(1000), '1.00 kB'],
    [bytes(20 * 1024 * 1024 + 12_345), '21.0 MB'],
    [bytes(300_000_000), '300 MB'],
    [bytes(1.5e12), '1.50 TB'],
    [bytes(null), '–'],
  ])('%s', (actual, expected) => {
    expect(actual).toBe(expected);
  });
});

describe('table', () => {
  it('aligns columns two spaces apart, figures to the right, without trailing blanks', () => {
    const text = table(['NAME', { header: 'COST', right: true }, 'STATE'], [
      ['a long job name', '€7.20', 'RUNNING'],
      ['b', '€1,234.56', null],
    ]);
    expect(text).toBe(['NAME                  COST  STATE', 'a long job name      €7.20  RUNNING', 'b                €1,234.56  –', ''].join('\n'));
  });

  it('keyValues aligns labels and leaves out undefined values', () => {
    expect(keyValues([['Job', 'x'], ['Exit code', null], ['Skipped', undefined]])).toBe('Job:        x\nExit code:  –\n');
  });
});
