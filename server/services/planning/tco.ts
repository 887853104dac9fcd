// TCO per delivered GPU-hour for staff: each resource class's cost at the utilisation the centre
// dashboard measured over the last 30 or 90 days (the same figures: `partitionUtilisation` in
// server/services/usage/centre.ts, from usage_rollups), and at a what-if utilisation, beside the tariffs with the
// utilisation at which each breaks even. The cost figures are configuration (server/catalogue.ts),
// read at run time; the maths is server/core/tco.ts.
import type { Db } from '~/db/client';
import { localName, type Catalogue } from '~/server/catalogue';
import type { Locale } from '~/server/i18n';
import { breakEvenBp, costCurve, CURVE_POINTS_BP, fractionToBp, overheadSharesCents, tcoAt, type TcoAt, type TcoClass, type TcoSite } from '~/server/core/tco';
import { rangeDays, rangePresets } from '~/server/core/usage/percentiles';
import { partitionUtilisation } from '~/server/services/usage/centre';

export const TCO_PERIODS = ['last30Days', 'last90Days'] as const;
export type TcoPeriod = (typeof TCO_PERIODS)[number];

export const TARIFF_KINDS = ['academic', 'company'] as const;

/** The catalogue fields the TCO needs; a class lacking any (its own or its site's) is listed with the missing ones. */
export const TCO_CLASS_FIELDS = ['capitalCostPerNodeEur', 'depreciationYears', 'maintenancePerNodePerYearEur'] as const;
export const TCO_SITE_FIELDS = ['energyPriceEurPerMwh', 'heatValueEurPerMwh', 'overheadPerYearEur'] as const;

export interface TcoTariff {
  kind: (typeof TARIFF_KINDS)[number];
  centsPerGpuHour: number;
  /** Lowest utilisation (bp) at which the cost per delivered GPU-hour is at most the tariff; null: not even at 100 %. */
  breakEvenBp: number | null;
}

export interface TcoClassReport {
  id: string;
  name: string;
  siteId: string;
  siteName: string;
  gpus: number;
  /** The centre dashboard's utilisation of this partition over the period. */
  measured: { usedGpuSeconds: number; capacityGpuSeconds: number; utilisation: number; utilisationBp: number };
  /** Catalogue fields not configured (then `costs` is null). */
  missing: string[];
  costs: {
    inputs: TcoClass & TcoSite & { overheadShareCents: number };
    atMeasured: TcoAt;
    atWhatIf: TcoAt | null;
    tariffs: TcoTariff[];
    curve: { utilisationBp: number; totalCents: number }[];
  } | null;
}

export interface TcoReport {
  period: TcoPeriod;
  range: { from: string; to: string; days: number };
  whatIfBp: number | null;
  classes: TcoClassReport[];
}

/**
 * tcoReport computes the TCO page for the period ending today: the catalogue's resource classes in
 * its order, each at its measured utilisation and, with `whatIfBp`, at that one too.
 */
export async function tcoReport(db: Db, catalogue: Catalogue, input: { period: TcoPeriod; today: string; whatIfBp?: number; locale?: Locale }): Promise<TcoReport> {
  const range = rangePresets(input.today)[input.period];
  const partitions = await partitionUtilisation(db, range);
  const byId = new Map(partitions.map((p) => [p.id, p]));
  const whatIfBp = input.whatIfBp ?? null;

  // Each site's overhead apportioned over its classes by GPU count.
  const overheadShare = new Map<string, number>();
  for (const site of catalogue.sites) {
    const classes = catalogue.resourceClasses.filter((rc) => rc.siteId === site.id);
    const shares = overheadSharesCents(site.overheadPerYearEur ?? 0, classes.map((rc) => rc.nodes * rc.gpusPerNode));
    classes.forEach((rc, i) => overheadShare.set(rc.id, shares[i]!));
  }

  const classes = catalogue.resourceClasses.map((rc): TcoClassReport => {
    const site = catalogue.sites.find((s) => s.id === rc.siteId)!;
    const gpus = rc.nodes * rc.gpusPerNode;
    const series = byId.get(rc.id);
    const utilisation = series?.utilisation ?? 0;
    const measured = {
      usedGpuSeconds: series?.usedGpuSeconds ?? 0,
      capacityGpuSeconds: series?.capacityGpuSeconds ?? gpus * rangeDays(range.from, range.to) * 86_400,
      utilisation,
      utilisationBp: fractionToBp(utilisation),
    };
    const missing = [...TCO_CLASS_FIELDS.filter((f) => rc[f] === undefined), ...TCO_SITE_FIELDS.filter((f) => site[f] === undefined)];
    const locale = input.locale ?? 'en';
    const base = { id: rc.id, name: localName(locale, rc), siteId: site.id, siteName: localName(locale, site), gpus, measured, missing };
    if (missing.length > 0) return { ...base, costs: null };

    const tcoClass: TcoClass = {
      nodes: rc.nodes,
      gpusPerNode: rc.gpusPerNode,
      gpuIdlePowerW: rc.gpuIdlePowerW,
      gpuMaxPowerW: rc.gpuMaxPowerW,
      nodeBasePowerW: rc.nodeBasePowerW,
      capitalCostPerNodeEur: rc.capitalCostPerNodeEur!,
      depreciationYears: rc.depreciationYears!,
      maintenancePerNodePerYearEur: rc.maintenancePerNodePerYearEur!,
    };
    const tcoSite: TcoSite = {
      pueMilli: site.pueMilli,
      heatReusePermille: site.heatReusePermille,
      energyPriceEurPerMwh: site.energyPriceEurPerMwh!,
      heatValueEurPerMwh: site.heatValueEurPerMwh!,
      overheadPerYearEur: site.overheadPerYearEur!,
    };
    const share = overheadShare.get(rc.id) ?? 0;
    return {
      ...base,
      costs: {
        inputs: { ...tcoClass, ...tcoSite, overheadShareCents: share },
        atMeasured: tcoAt(tcoClass, tcoSite, share, measured.utilisationBp),
        atWhatIf: whatIfBp === null ? null : tcoAt(tcoClass, tcoSite, share, whatIfBp),
        tariffs: TARIFF_KINDS.map((kind) => ({ kind, centsPerGpuHour: rc.tariffs[kind], breakEvenBp: breakEvenBp(tcoClass, tcoSite, share, rc.tariffs[kind]) })),
        curve: costCurve(tcoClass, tcoSite, share, CURVE_POINTS_BP),
      },
    };
  });

  return { period: input.period, range: { ...range, days: rangeDays(range.from, range.to) }, whatIfBp, classes };
}
