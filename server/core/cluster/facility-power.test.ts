import { describe, expect, it } from 'vitest';
import { facilityPowerBySite, type FacilityPowerSite } from './facility-power';

const t0 = new Date('2026-12-01T08:00:00Z');
const t1 = new Date('2026-12-01T08:01:00Z');

const sites: FacilityPowerSite[] = [
  { id: 'jena', name: 'Jena', pueMilli: 1080, capW: 500_000 },
  { id: 'lugano', name: 'Lugano', pueMilli: 1200, capW: null },
  { id: 'empty', name: 'Empty', pueMilli: 1040, capW: null },
  { id: 'capped-empty', name: 'Capped, no classes', pueMilli: 1100, capW: 20_000 },
];
const partitionSite = new Map([
  ['h100', 'jena'],
  ['h100-b', 'jena'],
  ['h100-ch', 'lugano'],
]);

describe('facilityPowerBySite', () => {
  it('sums the partitions of each site per sample time and multiplies by the site’s PUE', () => {
    const result = facilityPowerBySite({
      sites,
      partitionSite,
      samples: [
        // Out of order on purpose; a partition at no known site ('gone') is left out.
        { at: t1, partition: 'h100', powerW: 350_001 },
        { at: t0, partition: 'h100', powerW: 300_000 },
        { at: t0, partition: 'h100-b', powerW: 80_000 },
        { at: t0, partition: 'h100-ch', powerW: 10_000 },
        { at: t1, partition: 'h100-ch', powerW: 12_345 },
        { at: t0, partition: 'gone', powerW: 5_000 },
      ],
      now: [
        { partition: 'h100', powerW: 400_000.25 },
        { partition: 'h100-b', powerW: 49_999.75 },
        { partition: 'gone', powerW: 1_000 },
      ],
    });
    expect(result).toEqual([
      {
        siteId: 'jena',
        siteName: 'Jena',
        pueMilli: 1080,
        capW: 500_000,
        // (300,000 + 80,000) × 1.08 = 410,400; at t1 only h100 was sampled: 350,001 × 1.08 = 378,001.08 → 378,001.
        points: [
          { at: t0, facilityW: 410_400 },
          { at: t1, facilityW: 378_001 },
        ],
        // (400,000.25 + 49,999.75) × 1.08 = 486,000.
        nowW: 486_000,
      },
      {
        siteId: 'lugano',
        siteName: 'Lugano',
        pueMilli: 1200,
        capW: null,
        // 10,000 × 1.2 = 12,000; 12,345 × 1.2 = 14,814.
        points: [
          { at: t0, facilityW: 12_000 },
          { at: t1, facilityW: 14_814 },
        ],
        // Nothing of Lugano's answered now: 0 W.
        nowW: 0,
      },
      // A site with neither figures nor a cap is left out; a capped one is shown with its cap.
      { siteId: 'capped-empty', siteName: 'Capped, no classes', pueMilli: 1100, capW: 20_000, points: [], nowW: 0 },
    ]);
  });

  it('rounds half up once per point, and has no figure now when the scheduler did not answer', () => {
    const [site] = facilityPowerBySite({
      sites: [{ id: 'jena', name: 'Jena', pueMilli: 1002, capW: null }],
      partitionSite,
      // 1,250 W × 1.002 = 1,252.5 → 1,253; 1,249 W × 1.002 = 1,251.498 → 1,251.
      samples: [
        { at: t0, partition: 'h100', powerW: 1_250 },
        { at: t1, partition: 'h100', powerW: 1_249 },
      ],
      now: null,
    });
    expect(site!.points.map((p) => p.facilityW)).toEqual([1_253, 1_251]);
    expect(site!.nowW).toBeNull();
  });
});
