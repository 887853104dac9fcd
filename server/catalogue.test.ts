import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { catalogueSchema, DEFAULT_CATALOGUE, DEMO_ISSUER, issuerSchema, loadCatalogue, localName } from './catalogue';
import { overheadSharesCents, tcoAt } from './core/tco';

describe('the catalogue’s names', () => {
  it('every site and resource class of the demo centre has an English and a German name, and they differ where words do', () => {
    for (const entry of [...DEFAULT_CATALOGUE.sites, ...DEFAULT_CATALOGUE.resourceClasses]) {
      expect(entry.name.trim()).not.toBe('');
      expect(entry.nameDe.trim()).not.toBe('');
    }
    expect(DEFAULT_CATALOGUE.sites.map((s) => localName('de', s))).toEqual(['Jena, Deutschland (Warmwasserkühlung)', 'Kajaani, Finnland (freie Kühlung)', 'Lugano, Schweiz (Seewasserkühlung)']);
    expect(localName('en', DEFAULT_CATALOGUE.resourceClasses[0]!)).toBe('H100 partition (Jena)');
    expect(localName('de', DEFAULT_CATALOGUE.resourceClasses[0]!)).toBe('H100-Partition (Jena)');
  });

  it.each(['sites', 'resourceClasses'] as const)('refuses a catalogue whose %s lack a German name', (list) => {
    const entries = DEFAULT_CATALOGUE[list].map(({ nameDe: _de, ...rest }) => rest);
    const result = catalogueSchema.safeParse({ ...DEFAULT_CATALOGUE, [list]: entries });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([list, 0, 'nameDe']);
  });
});

describe('the catalogue’s invoice issuer', () => {
  it('the demo centre’s issuer passes its own checks, and a catalogue without one gets it', () => {
    expect(issuerSchema.parse(DEMO_ISSUER)).toEqual(DEMO_ISSUER);
    const { issuer: _omitted, ...withoutIssuer } = DEFAULT_CATALOGUE;
    expect(catalogueSchema.parse(withoutIssuer).issuer).toEqual(DEMO_ISSUER);
  });

  it('normalises the IBAN and VAT ID as printed by people', () => {
    const parsed = issuerSchema.parse({ ...DEMO_ISSUER, iban: 'de89 3704 0044 0532 0130 00', vatId: 'de 812 345 673' });
    expect(parsed.iban).toBe('DE89370400440532013000');
    expect(parsed.vatId).toBe('DE812345673');
  });

  it.each([
    ['an IBAN with wrong check digits', { iban: 'DE89370400440532013001' }, 'iban'],
    ['a VAT ID with a wrong check digit', { vatId: 'DE812345674' }, 'vatId'],
    ['a BIC of the wrong length', { bic: 'COBADEF' }, 'bic'],
    ['negative payment terms', { paymentTermsDays: -1 }, 'paymentTermsDays'],
  ])('refuses %s', (_what, change, field) => {
    const result = issuerSchema.safeParse({ ...DEMO_ISSUER, ...change });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([field]);
  });
});

describe('the catalogue’s cost-of-ownership figures', () => {
  it("takes a class's Slurm options (QoS, GPU type, constraint, reservation) and names the field of a bad one", () => {
    const [h100, ...rest] = DEFAULT_CATALOGUE.resourceClasses;
    const withSlurm = (slurm: unknown) => catalogueSchema.safeParse({ ...DEFAULT_CATALOGUE, resourceClasses: [{ ...h100!, slurm }, ...rest] });
    const ok = withSlurm({ qos: 'high', gpuType: 'h100', constraint: 'nvlink&ib', reservation: 'maint-2' });
    expect(ok.success && ok.data.resourceClasses[0]!.slurm).toEqual({ qos: 'high', gpuType: 'h100', constraint: 'nvlink&ib', reservation: 'maint-2' });
    const bad = withSlurm({ qos: 'high; rm -rf' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['resourceClasses', 0, 'slurm', 'qos']);
    expect(withSlurm({ partition: 'gpu' }).success).toBe(false);
  });

  it('checks the shared models: each id once, on classes it has, with a price per tenant kind', () => {
    const [llama] = DEFAULT_CATALOGUE.inference.sharedModels;
    const write = (sharedModels: unknown[]) => {
      const file = path.join(os.tmpdir(), `catalogue-shared-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ ...DEFAULT_CATALOGUE, inference: { ...DEFAULT_CATALOGUE.inference, sharedModels } }));
      return file;
    };
    expect(loadCatalogue(write([llama])).inference.sharedModels.map((m) => m.id)).toEqual([llama!.id]);
    expect(() => loadCatalogue(write([llama, llama]))).toThrow(`inference.sharedModels names ${llama!.id} twice`);
    expect(() => loadCatalogue(write([{ ...llama, resourceClassIds: ['a100'] }]))).toThrow('names unknown resource class a100');
    expect(() => loadCatalogue(write([{ ...llama, prices: { company: llama!.prices.company } }]))).toThrow(/inference\.sharedModels\.0\.prices\.academic/);
    expect(() => loadCatalogue(write([{ ...llama, id: 'bad name' }]))).toThrow(/inference\.sharedModels\.0\.id/);
  });

  it('a catalogue without them is still valid', () => {
    const bare = { ...DEFAULT_CATALOGUE, sites: DEFAULT_CATALOGUE.sites.map(({ energyPriceEurPerMwh: _p, heatValueEurPerMwh: _h, overheadPerYearEur: _o, ...s }) => s), resourceClasses: DEFAULT_CATALOGUE.resourceClasses.map(({ capitalCostPerNodeEur: _c, depreciationYears: _d, maintenancePerNodePerYearEur: _m, ...rc }) => rc) };
    expect(catalogueSchema.safeParse(bare).success).toBe(true);
  });

  it('the demo centre’s figures are complete and give a plausible cost (€1–€10 per GPU-hour at 70 %)', () => {
    for (const rc of DEFAULT_CATALOGUE.resourceClasses) {
      const site = DEFAULT_CATALOGUE.sites.find((s) => s.id === rc.siteId)!;
      const siteGpus = DEFAULT_CATALOGUE.resourceClasses.filter((c) => c.siteId === site.id).map((c) => c.nodes * c.gpusPerNode);
      const share = overheadSharesCents(site.overheadPerYearEur!, siteGpus)[DEFAULT_CATALOGUE.resourceClasses.filter((c) => c.siteId === site.id).indexOf(rc)]!;
      const at = tcoAt(
        { ...rc, capitalCostPerNodeEur: rc.capitalCostPerNodeEur!, depreciationYears: rc.depreciationYears!, maintenancePerNodePerYearEur: rc.maintenancePerNodePerYearEur! },
        { ...site, energyPriceEurPerMwh: site.energyPriceEurPerMwh!, heatValueEurPerMwh: site.heatValueEurPerMwh!, overheadPerYearEur: site.overheadPerYearEur! },
        share,
        7000,
      );
      expect(at.perGpuHour!.totalCents).toBeGreaterThan(100);
      expect(at.perGpuHour!.totalCents).toBeLessThan(1000);
    }
  });
});
