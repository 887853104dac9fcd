// The resource catalogue in the database: synced from configuration on start, read by everyone.
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { accessModes, resourceClasses, sites, tariffs, type OrgKind, type Residency } from '~/db/schema';
import { localName, type Catalogue } from '~/server/catalogue';
import type { Locale } from '~/server/i18n';
import { gpuHourFigures } from '~/server/core/billing/price-list';
import { gpuHoursToSeconds } from '~/server/core/ledger/units';

/** syncCatalogue upserts the configured sites, resource classes, tariffs and access modes; ones no longer configured are deactivated. */
export async function syncCatalogue(db: Db, catalogue: Catalogue): Promise<void> {
  await db.transaction(async (tx) => {
    for (const site of catalogue.sites) {
      await tx.insert(sites).values(site).onConflictDoUpdate({ target: sites.id, set: site });
    }
    await tx.update(resourceClasses).set({ active: false }).where(eq(resourceClasses.active, true));
    for (const { tariffs: prices, ...rc } of catalogue.resourceClasses) {
      const row = { ...rc, active: true };
      await tx.insert(resourceClasses).values(row).onConflictDoUpdate({ target: resourceClasses.id, set: row });
      for (const tenantKind of ['academic', 'company'] as const) {
        const tariff = { resourceClassId: rc.id, tenantKind, centsPerGpuHour: prices[tenantKind] };
        await tx
          .insert(tariffs)
          .values(tariff)
          .onConflictDoUpdate({ target: [tariffs.resourceClassId, tariffs.tenantKind], set: { centsPerGpuHour: tariff.centsPerGpuHour } });
      }
    }
    await tx.update(accessModes).set({ active: false }).where(eq(accessModes.active, true));
    for (const [index, mode] of catalogue.accessModes.entries()) {
      const row = {
        id: mode.id,
        name: mode.name,
        maxGpuSeconds: mode.maxGpuHours === null ? null : gpuHoursToSeconds(mode.maxGpuHours),
        minGpuSeconds: mode.minGpuHours === null ? null : gpuHoursToSeconds(mode.minGpuHours),
        intake: mode.intake,
        durationDays: mode.durationDays,
        reviewPath: mode.reviewPath,
        targetDecisionWorkingDays: mode.targetDecisionWorkingDays,
        defaultStorageGb: mode.defaultStorageGb,
        maxStorageGb: mode.maxStorageGb,
        sortOrder: index,
        active: true,
      };
      await tx.insert(accessModes).values(row).onConflictDoUpdate({ target: accessModes.id, set: row });
    }
  });
}

/** residencyAllows tells whether a tenant's data-residency requirement allows a site. */
export function residencyAllows(residency: Residency, site: { country: string; inEu: boolean }): boolean {
  if (residency === 'DE') return site.country === 'DE';
  if (residency === 'EU') return site.inEu;
  return true;
}

/** listResourceClasses lists the active resource classes a tenant may use, with its tariff; names in the reader's language. */
export async function listResourceClasses(db: DbOrTx, tenant: { kind: OrgKind; residency: Residency }, locale: Locale = 'en') {
  const rows = await classesWithTariff(db, tenant.kind);
  return rows
    .filter(({ site }) => residencyAllows(tenant.residency, site))
    .map(({ rc, site, centsPerGpuHour }) => ({
      id: rc.id,
      name: localName(locale, rc),
      gpuModel: rc.gpuModel,
      gpusPerNode: rc.gpusPerNode,
      nodes: rc.nodes,
      maxWalltimeSeconds: rc.maxWalltimeSeconds,
      siteId: site.id,
      siteName: localName(locale, site),
      country: site.country,
      inEu: site.inEu,
      centsPerGpuHour,
    }));
}

/** classesWithTariff reads the active resource classes with their site and the tariff of a kind of tenant, by id. */
function classesWithTariff(db: DbOrTx, kind: OrgKind) {
  return db
    .select({ rc: resourceClasses, site: sites, centsPerGpuHour: tariffs.centsPerGpuHour })
    .from(resourceClasses)
    .innerJoin(sites, eq(sites.id, resourceClasses.siteId))
    .innerJoin(tariffs, and(eq(tariffs.resourceClassId, resourceClasses.id), eq(tariffs.tenantKind, kind)))
    .where(eq(resourceClasses.active, true))
    .orderBy(asc(resourceClasses.id));
}

/**
 * priceList lists every active resource class with what a GPU-hour costs the tenant's kind and draws
 * and emits at its site (server/core/billing/price-list.ts), and whether the tenant's residency rule
 * lets it run there.
 */
export async function priceList(db: DbOrTx, tenant: { kind: OrgKind; residency: Residency }, locale: Locale = 'en') {
  const rows = await classesWithTariff(db, tenant.kind);
  return rows.map(({ rc, site, centsPerGpuHour }) => ({
    resourceClassId: rc.id,
    name: localName(locale, rc),
    gpuModel: rc.gpuModel,
    siteName: localName(locale, site),
    country: site.country,
    inEu: site.inEu,
    pueMilli: site.pueMilli,
    gridGco2PerKwh: site.gridGco2PerKwh,
    allowed: residencyAllows(tenant.residency, site),
    ...gpuHourFigures(rc, site, centsPerGpuHour),
  }));
}

/**
 * storagePriceList lists each site with a resource class and what a TB-month of storage in its workspaces
 * costs the tenant's kind (issue #27): companies the site's price, research tenants nothing (they see their use).
 */
export async function storagePriceList(db: DbOrTx, tenant: { kind: OrgKind; residency: Residency }, locale: Locale = 'en') {
  const rows = await db
    .selectDistinct({ site: sites })
    .from(sites)
    .innerJoin(resourceClasses, and(eq(resourceClasses.siteId, sites.id), eq(resourceClasses.active, true)))
    .orderBy(asc(sites.id));
  return rows.map(({ site }) => ({
    siteId: site.id,
    siteName: localName(locale, site),
    country: site.country,
    centsPerTbMonth: tenant.kind === 'company' ? site.storageCentsPerTbMonth : 0,
    allowed: residencyAllows(tenant.residency, site),
  }));
}

/** listAccessModes lists the active access modes in their configured order. */
export async function listAccessModes(db: DbOrTx) {
  return db.select().from(accessModes).where(eq(accessModes.active, true)).orderBy(asc(accessModes.sortOrder));
}

/** resourceClassNames maps resource class ids to their names (in English, or in the language asked for). */
export async function resourceClassNames(db: DbOrTx, ids: string[], locale: Locale = 'en'): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: resourceClasses.id, name: resourceClasses.name, nameDe: resourceClasses.nameDe }).from(resourceClasses).where(inArray(resourceClasses.id, ids));
  return new Map(rows.map((r) => [r.id, localName(locale, r)]));
}
