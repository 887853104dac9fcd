import { describe, expect, it } from 'vitest';
import { nearestRank } from './percentiles';
import { addCounts, bucketValue, percentileOfCounts, waitBucket } from './wait-buckets';

/** Waits across the range a centre sees: every second up to 10 min, then steps up to a year, and each power of two ± 1. */
function sampleWaits(): number[] {
  const waits: number[] = [];
  for (let w = 0; w <= 600; w++) waits.push(w);
  for (let w = 601; w < 366 * 86_400; w = Math.ceil(w * 1.013) + 7) waits.push(w);
  for (let e = 7; e <= 30; e++) waits.push(2 ** e - 1, 2 ** e, 2 ** e + 1);
  return waits;
}

function countsOf(waits: readonly number[]): Map<number, number> {
  const counts = new Map<number, number>();
  addCounts(counts, waits.map((w): [number, number] => [waitBucket(w), 1]));
  return counts;
}

describe('wait buckets', () => {
  it('keeps every wait under 128 s exact and every other within 1.6 % of its bucket’s value', () => {
    for (const w of sampleWaits()) {
      const value = bucketValue(waitBucket(w));
      if (w < 128) expect(value).toBe(w);
      else expect(Math.abs(value - w) / w, `wait ${w} s → ${value} s`).toBeLessThanOrEqual(1 / 64);
    }
  });

  it('orders buckets as the waits: a longer wait never falls in an earlier bucket', () => {
    const waits = sampleWaits().sort((a, b) => a - b);
    for (let i = 1; i < waits.length; i++) expect(waitBucket(waits[i]!)).toBeGreaterThanOrEqual(waitBucket(waits[i - 1]!));
    // Every bucket's value lies in that bucket: a percentile read from the counts is in the right bucket.
    for (let b = 0; b <= waitBucket(366 * 86_400); b++) expect(waitBucket(bucketValue(b)), `bucket ${b}`).toBe(b);
  });

  it('counts a negative or fractional wait as its whole seconds, at least 0, and clamps beyond 68 years', () => {
    expect(waitBucket(-5)).toBe(0);
    expect(waitBucket(12.9)).toBe(12);
    expect(waitBucket(2 ** 40)).toBe(waitBucket(2 ** 31 - 1));
  });

  it('gives percentile_disc’s nearest rank: exact on short waits, within a bucket on long ones', () => {
    const short = [5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 120];
    expect(percentileOfCounts(countsOf(short), 0.5)).toBe(nearestRank(short, 0.5));
    expect(percentileOfCounts(countsOf(short), 0.9)).toBe(nearestRank(short, 0.9));
    const long = Array.from({ length: 1000 }, (_, i) => 60 + i * 397);
    for (const p of [0.5, 0.9, 0.99]) {
      const exact = nearestRank(long, p)!;
      expect(percentileOfCounts(countsOf(long), p)).toBe(bucketValue(waitBucket(exact)));
    }
    expect(percentileOfCounts(new Map(), 0.5)).toBeNull();
  });

  it('adds the counts of rollup rows (string keys, as jsonb gives them) to waits bucketed here', () => {
    const counts = new Map<number, number>();
    addCounts(counts, { '5': 2, '140': 1 });
    addCounts(counts, [[5, 1]]);
    expect([...counts.entries()].sort((a, b) => a[0] - b[0])).toEqual([
      [5, 3],
      [140, 1],
    ]);
  });
});
