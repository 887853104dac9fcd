// The catalogue's grid figures and the hourly profiles agree: the profile shapes the day, the annual
// figure (gridGco2PerKwh) is what a job's CO2e is settled with.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogueSchema, DEFAULT_CATALOGUE, loadCatalogue } from './catalogue';
import { flatProfile, profileSum, siteGrid } from './core/carbon/profiles';

describe("the catalogue's grid profiles", () => {
  it("each demo site's profile has the site's annual figure as its mean, in the site's time zone, with a price", () => {
    const zones = { 'de-jena': 'Europe/Berlin', 'fi-kajaani': 'Europe/Helsinki', 'ch-lugano': 'Europe/Zurich' } as Record<string, string>;
    for (const site of DEFAULT_CATALOGUE.sites) {
      const grid = siteGrid(site);
      expect(profileSum(grid.gco2PerKwh)).toBe(site.gridGco2PerKwh * 288);
      expect(grid.timeZone).toBe(zones[site.id]);
      expect(grid.priceEurPerMwh).not.toBeNull();
    }
    expect(DEFAULT_CATALOGUE.sites.map((s) => s.energyPriceEurPerMwh)).toEqual([190, 90, 160]);
  });

  it('refuses a time zone the runtime does not know and a profile that is not 12 × 24', () => {
    const site = DEFAULT_CATALOGUE.sites[0]!;
    const withSite = (change: object) => catalogueSchema.safeParse({ ...DEFAULT_CATALOGUE, sites: [{ ...site, ...change }] });
    expect(withSite({ timeZone: 'Europe/Atlantis' }).error?.issues[0]?.path).toEqual(['sites', 0, 'timeZone']);
    expect(withSite({ gridProfile: [[1, 2, 3]] }).error?.issues[0]?.path).toEqual(['sites', 0, 'gridProfile']);
    expect(withSite({ timeZone: 'Europe/Berlin', gridProfile: flatProfile(380) }).success).toBe(true);
  });

  it("refuses a site's own profile whose mean is not its annual figure", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-')), 'catalogue.json');
    const write = (gridProfile: unknown) => fs.writeFileSync(file, JSON.stringify({ ...DEFAULT_CATALOGUE, sites: DEFAULT_CATALOGUE.sites.map((s, i) => (i === 0 ? { ...s, gridProfile } : s)) }));
    write(flatProfile(200));
    expect(() => loadCatalogue(file)).toThrow(/site de-jena: the mean of gridProfile \(200\) is not gridGco2PerKwh \(380\)/);
    write(flatProfile(390));
    expect(loadCatalogue(file).sites[0]!.gridProfile).toEqual(flatProfile(390));
  });
});
