// Site and class names in the reader's language (issue #24): every page that names a site or a class
// gives the catalogue's German name to a German reader and the English one otherwise — the tenant's
// allocation, application and job list, staff's allocations, applications, centre, TCO and tenant
// usage, and the daily expiry reminder mail. CSV and REST keep the ids and English names (tested beside them).
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobs, mailOutbox, users } from '~/db/schema';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { sendExpiryReminders } from './mail/reminders';
import { rebuildRollups } from './usage/usage';

const TODAY = '2026-12-01';
const EN = { cls: 'H100 partition (Jena)', site: 'Jena, Germany (warm-water cooled)' };
const DE = { cls: 'H100-Partition (Jena)', site: 'Jena, Deutschland (Warmwasserkühlung)' };

describe.each(dbTargets())('names in the reader’s language on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let granted: Awaited<ReturnType<typeof activeAllocation>>;
  const now = () => new Date(`${TODAY}T12:00:00Z`);

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
    owner = await createTenant(db, { name: `Sprachinstitut ${randomUUID().slice(0, 6)}` });
    granted = await activeAllocation(db, owner, admin, { gpuHours: 50, today: TODAY, periodEnd: '2026-12-09' });
    const ended = new Date(`${TODAY}T10:00:00Z`);
    await db.insert(jobs).values({
      orgId: owner.orgId, projectId: granted.projectId, allocationId: granted.allocationId, userId: owner.userId, idempotencyKey: randomUUID(),
      name: 'train', kind: 'training', resourceClassId: 'h100', siteId: 'de-jena', gpus: 2, nodes: 1, walltimeSeconds: 7200,
      image: 'nvcr.io/nvidia/pytorch:24.05-py3', command: 'python train.py', env: {}, state: 'COMPLETED', reservedAmount: 14_400, reservedUnit: 'gpu_seconds', centsPerGpuHour: 180, costCents: 360,
      submittedAt: new Date(ended.getTime() - 3_700_000), startedAt: new Date(ended.getTime() - 3_600_000), endedAt: ended,
      gpuSeconds: 7200, chargedAmount: 7200, energyWh: 900, settledAt: new Date(ended.getTime() + 2000),
    });
    // The job was written as settlement leaves it; the usage rollups are made from it as settlement would.
    await rebuildRollups(db);
  });
  afterAll(async () => handle?.close());

  /** What a page's answer says, as one text: the German names in German, never the English ones, and the reverse. */
  async function both(read: (locale: 'en' | 'de') => Promise<unknown>, names: Array<keyof typeof EN>) {
    const [en, de] = [JSON.stringify(await read('en')), JSON.stringify(await read('de'))];
    for (const name of names) {
      expect(en, `en: ${name}`).toContain(EN[name]);
      expect(en, `en: ${name}`).not.toContain(DE[name]);
      expect(de, `de: ${name}`).toContain(DE[name]);
      expect(de, `de: ${name}`).not.toContain(EN[name]);
    }
  }
  const tenant = (locale: 'en' | 'de') => callerFor(db, { userId: owner.userId, orgId: owner.orgId, locale, now });
  const staff = (locale: 'en' | 'de') => callerFor(db, { userId: admin.userId, locale, now });

  it('the tenant’s allocation, application and job list', async () => {
    await both((l) => tenant(l).allocation.overview({ allocationId: granted.allocationId }), ['cls']);
    await both((l) => tenant(l).application.get({ applicationId: granted.applicationId }), ['cls']);
    await both((l) => tenant(l).job.list({}), ['cls']);
  });

  it('staff’s allocations, application, centre, TCO and tenant usage', async () => {
    await both((l) => staff(l).staff.allocations({}), ['cls']);
    await both((l) => staff(l).staff.allocation({ allocationId: granted.allocationId }), ['cls']);
    await both((l) => staff(l).staff.application({ applicationId: granted.applicationId }), ['cls']);
    await both((l) => staff(l).centre.partitions(), ['cls']);
    await both((l) => staff(l).centre.dashboard({ from: TODAY, to: TODAY }), ['cls']);
    await both((l) => staff(l).staff.tco({}), ['site']);
    await both((l) => staff(l).staff.tenantUsage({ orgId: owner.orgId, period: { month: '2026-12' }, groupBy: 'resourceClass' }), ['cls']);
  });

  it('the expiry reminder mail, in each reader’s own language', async () => {
    await db.update(users).set({ locale: 'de' }).where(eq(users.id, owner.userId));
    await sendExpiryReminders(db, new Date('2026-12-01T06:00:00Z'));
    const [mail] = await db.select().from(mailOutbox).where(and(eq(mailOutbox.toUserId, owner.userId), eq(mailOutbox.kind, 'allocation_expiring')));
    expect(mail!.textBody).toContain(DE.cls);
    expect(mail!.textBody).not.toContain(EN.cls);
  });
});
