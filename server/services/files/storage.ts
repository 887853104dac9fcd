// Storage allocations (issue #27): what each project's workspace at a site holds, against its quota.
//
// Measured by the portal itself: each upload adds its bytes when it lands, each delete takes its bytes off
// (`recordStorageChange`), and the worker's scan walks every workspace (`scanStorage`, without following
// links) and books what it found (`recordStorageMeasurement`) — which catches what jobs wrote, and corrects
// any drift. Each booking, in one transaction under the workspace's row lock:
//   1. the days since the last measurement keep what it said; today's high-water mark rises to the new figure;
//   2. the workspace's figure is set, and its alert level moved (server/core/usage/storage.ts `storageAlertStep`);
//   3. crossing 80 % or 100 % upwards tells the project's PI and managers and the tenant's owners, once per crossing.
//
// The quota at a site is the sum of the storage lines of the project's active allocations whose class is at
// that site, a credit line (no class) counting at every site. The portal refuses an upload that would take
// the workspace over it (`checkStorageQuota`); what a job writes is only seen by the next scan: the centre
// enforces the quota in the filesystem (XFS or Lustre project quotas) if it must be hard (docs/files.md).
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import { lstat } from 'node:fs/promises';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { allocations, organisations, projects, resourceClasses, sites, storageDays, storageUsage } from '~/db/schema';
import { localName } from '~/server/catalogue';
import { residencyAllowsSite } from '~/server/core/jobs/admission';
import { daysBetweenMeasurements, gbOneDecimal, storageAlertStep, storageQuotaRefusal, usedPercent, type StorageAlertLevel } from '~/server/core/usage/storage';
import { AppError } from '~/server/errors';
import type { Locale } from '~/server/i18n';
import type { TenantActor } from '~/server/services/actor';
import { budgetKeepers, notifyMembers } from '~/server/services/mail/notifications';
import { inTransaction } from '~/server/services/transaction';
import { siteShortName } from '~/server/services/usage/storage';
import { workspaceSites } from './files';
import { folderBytes, workspaceOf, type SiteRoots } from './workspace';

/** A project's workspace at a site, and its tenant. */
export interface WorkspaceKey {
  orgId: string;
  projectId: string;
  siteId: string;
}

/** storageQuotaGb is a project's storage quota at a site, in GB: its active allocations' lines there (a credit line's everywhere). */
export async function storageQuotaGb(db: DbOrTx, projectId: string, siteId: string): Promise<number> {
  const [row] = await db
    .select({ gb: sql<string>`coalesce(sum(${allocations.storageGb}), 0)` })
    .from(allocations)
    .leftJoin(resourceClasses, eq(resourceClasses.id, allocations.resourceClassId))
    .where(and(eq(allocations.projectId, projectId), eq(allocations.status, 'active'), or(isNull(allocations.resourceClassId), eq(resourceClasses.siteId, siteId))));
  return Number(row?.gb ?? 0);
}

/** usedBytesOf is what a workspace held at its last measurement (0 before the first). */
export async function usedBytesOf(db: DbOrTx, projectId: string, siteId: string): Promise<number> {
  const [row] = await db.select({ bytes: storageUsage.bytes }).from(storageUsage).where(and(eq(storageUsage.projectId, projectId), eq(storageUsage.siteId, siteId)));
  return row?.bytes ?? 0;
}

/**
 * checkStorageQuota refuses a write of `askedBytes` (an upload's declared size; 0 when it declares none yet)
 * that would take a project's workspace at a site over its quota, naming what it holds, what was asked,
 * what was granted and what is left (PAYLOAD_TOO_LARGE, on `size`). The caller has checked the person may
 * write there (server/services/files/files.ts `projectWorkspace`).
 */
export async function checkStorageQuota(db: DbOrTx, input: { projectId: string; siteId: string; askedBytes: number | null }, locale: Locale = 'en'): Promise<void> {
  const [grantedGb, usedBytes] = await Promise.all([storageQuotaGb(db, input.projectId, input.siteId), usedBytesOf(db, input.projectId, input.siteId)]);
  const refusal = storageQuotaRefusal({ usedBytes, askedBytes: input.askedBytes ?? 0, grantedGb });
  if (!refusal) return;
  const [site] = await db.select({ name: sites.name, nameDe: sites.nameDe }).from(sites).where(eq(sites.id, input.siteId));
  throw new AppError(
    'PAYLOAD_TOO_LARGE',
    grantedGb === 0 ? 'files.storage.noQuota' : 'files.storage.overQuota',
    { asked: gbOneDecimal(refusal.askedBytes), left: gbOneDecimal(refusal.leftBytes), granted: grantedGb, used: gbOneDecimal(refusal.usedBytes), site: site ? siteShortName(localName(locale, site)) : input.siteId },
    'size',
  );
}

/** recordStorageChange books a write through the portal: an upload's bytes (positive) or a delete's (negative). */
export function recordStorageChange(db: Db | Tx, input: WorkspaceKey & { deltaBytes: number; now?: Date }): Promise<StorageBooking> {
  if (!Number.isSafeInteger(input.deltaBytes)) throw new RangeError(`deltaBytes must be whole bytes, got ${input.deltaBytes}`);
  return book(db, input, (before) => before + input.deltaBytes, input.now ?? new Date(), false);
}

/** recordStorageMeasurement books what the worker's scan found a workspace to hold. */
export function recordStorageMeasurement(db: Db | Tx, input: WorkspaceKey & { bytes: number; now: Date }): Promise<StorageBooking> {
  if (!Number.isSafeInteger(input.bytes) || input.bytes < 0) throw new RangeError(`bytes must be whole non-negative bytes, got ${input.bytes}`);
  return book(db, input, () => input.bytes, input.now, true);
}

export interface StorageBooking {
  bytes: number;
  grantedGb: number;
  /** The alert sent by this booking (80 or 100), if it crossed one. */
  alerted: StorageAlertLevel | null;
}

async function book(db: Db | Tx, key: WorkspaceKey, next: (before: number) => number, now: Date, scanned: boolean): Promise<StorageBooking> {
  const today = now.toISOString().slice(0, 10);
  return inTransaction(db, async (tx) => {
    // The workspace's row, made if missing, then locked: two bookings of one workspace take turns.
    await tx.insert(storageUsage).values({ ...key, bytes: 0, measuredAt: now }).onConflictDoNothing();
    const [row] = await tx
      .select()
      .from(storageUsage)
      .where(and(eq(storageUsage.projectId, key.projectId), eq(storageUsage.siteId, key.siteId)))
      .for('update');
    if (!row) throw new Error('storage_usage row vanished');
    const before = row.bytes;
    const bytes = Math.max(0, next(before));
    const lastDay = row.measuredAt.toISOString().slice(0, 10);
    // The days nothing measured keep what the last measurement said; today starts with it too.
    const gap = daysBetweenMeasurements(lastDay, today);
    if (gap.length && before > 0) {
      await tx
        .insert(storageDays)
        .values(gap.map((day) => ({ ...key, day, bytes: before })))
        .onConflictDoNothing();
    }
    const startOfToday = lastDay < today ? before : 0;
    await tx
      .insert(storageDays)
      .values({ ...key, day: today, bytes: Math.max(startOfToday, bytes) })
      .onConflictDoUpdate({ target: [storageDays.orgId, storageDays.day, storageDays.projectId, storageDays.siteId], set: { bytes: sql`greatest(${storageDays.bytes}, excluded.bytes)` } });
    const grantedGb = await storageQuotaGb(tx, key.projectId, key.siteId);
    const step = storageAlertStep({ alertedPercent: row.alertedPercent, usedBytes: bytes, grantedGb });
    // A measurement older than the row's (a slow scan finishing after an upload booked) keeps the row's time.
    const measuredAt = now.getTime() > row.measuredAt.getTime() ? now : row.measuredAt;
    await tx
      .update(storageUsage)
      .set({ bytes, measuredAt, alertedPercent: step.level, ...(scanned ? { scannedAt: now } : {}) })
      .where(and(eq(storageUsage.projectId, key.projectId), eq(storageUsage.siteId, key.siteId)));
    if (step.alert) await alertStorage(tx, key, { bytes, grantedGb, level: step.alert, now });
    return { bytes, grantedGb, alerted: step.alert };
  });
}

/** alertStorage tells the project's PI and managers and the tenant's owners that its workspace at a site crossed a share of its quota. */
async function alertStorage(tx: Tx, key: WorkspaceKey, figures: { bytes: number; grantedGb: number; level: StorageAlertLevel; now: Date }) {
  const [project] = await tx.select({ title: projects.title }).from(projects).where(eq(projects.id, key.projectId));
  const [site] = await tx.select({ name: sites.name }).from(sites).where(eq(sites.id, key.siteId));
  const params = {
    project: project?.title ?? key.projectId,
    site: siteShortName(site?.name ?? key.siteId),
    used: gbOneDecimal(figures.bytes),
    granted: figures.grantedGb,
    percent: usedPercent(figures.bytes, figures.grantedGb) ?? 100,
  };
  await notifyMembers(tx, key.orgId, await budgetKeepers(tx, key), figures.level === 100 ? 'notice.storageFull' : 'notice.storage80', params, `/projects/${key.projectId}`, {
    // Once per crossing: the level kept on the row says whether it was crossed; the key only tells mails apart.
    dedupeKey: `storage:${key.projectId}:${key.siteId}:${figures.level}:${figures.now.toISOString()}`,
  });
}

/** A project's storage at each site it has a workspace at: what it holds (as last measured), its quota, the share. */
export async function projectStorage(db: DbOrTx, actor: TenantActor, projectId: string, locale: Locale = 'en') {
  const allowed = await workspaceSites(db, actor, projectId);
  const usage = await db.select().from(storageUsage).where(and(eq(storageUsage.projectId, projectId), eq(storageUsage.orgId, actor.org.id)));
  const rows = await Promise.all(
    allowed.map(async (site) => {
      const used = usage.find((u) => u.siteId === site.id);
      const grantedGb = await storageQuotaGb(db, projectId, site.id);
      return {
        siteId: site.id,
        siteName: localName(locale, site),
        usedBytes: used?.bytes ?? 0,
        grantedGb,
        usedPercent: usedPercent(used?.bytes ?? 0, grantedGb),
        measuredAt: used?.measuredAt ?? null,
        scannedAt: used?.scannedAt ?? null,
      };
    }),
  );
  // A site with neither a quota nor anything stored says nothing worth a row.
  return rows.filter((r) => r.grantedGb > 0 || r.usedBytes > 0);
}

export interface ScanResult {
  scanned: number;
  /** Workspaces whose figure changed, and alerts sent. */
  changed: number;
  alerts: number;
  failed: number;
}

/**
 * scanStorage walks every project workspace at every site its residency allows (folderBytes: regular files'
 * apparent sizes, no link followed) and books what it holds; a workspace gone since its last measurement
 * books 0. One transaction per workspace, so a slow filesystem holds no lock for long. `siteIds` limits it
 * (tests); `projectIds` too.
 */
export async function scanStorage(db: Db, roots: SiteRoots, now: () => Date, options: { siteIds?: readonly string[]; projectIds?: readonly string[] } = {}): Promise<ScanResult> {
  const result: ScanResult = { scanned: 0, changed: 0, alerts: 0, failed: 0 };
  const [allSites, allProjects, known] = await Promise.all([
    db.select().from(sites),
    db.select({ id: projects.id, orgId: projects.orgId, dataResidency: projects.dataResidency, residency: organisations.residency }).from(projects).innerJoin(organisations, eq(organisations.id, projects.orgId)),
    db.select({ projectId: storageUsage.projectId, siteId: storageUsage.siteId, bytes: storageUsage.bytes }).from(storageUsage),
  ]);
  const recorded = new Map(known.map((k) => [`${k.projectId} ${k.siteId}`, k.bytes]));
  for (const site of allSites) {
    if (options.siteIds && !options.siteIds.includes(site.id)) continue;
    try {
      roots.rootOf(site.id);
    } catch {
      continue; // a site no longer in the catalogue has no filesystem here
    }
    for (const project of allProjects) {
      if (options.projectIds && !options.projectIds.includes(project.id)) continue;
      const before = recorded.get(`${project.id} ${site.id}`);
      const allowed = residencyAllowsSite(project.residency, site) && (!project.dataResidency || residencyAllowsSite(project.dataResidency, site));
      if (!allowed && before === undefined) continue;
      const dir = workspaceOf(roots, site.id, project.id).dir;
      const st = await lstat(dir).catch(() => null);
      // No folder (or something that is not one where it should be): nothing to count, unless it held something before.
      if (!st?.isDirectory() && !before) continue;
      try {
        const bytes = st?.isDirectory() ? await folderBytes(dir) : 0;
        const booked = await recordStorageMeasurement(db, { orgId: project.orgId, projectId: project.id, siteId: site.id, bytes, now: now() });
        result.scanned += 1;
        if (bytes !== before) result.changed += 1;
        if (booked.alerted) result.alerts += 1;
      } catch {
        result.failed += 1;
      }
    }
  }
  return result;
}
