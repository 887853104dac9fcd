// Storage allocations (issue #27) on PGlite and real Postgres: a request's storage line granted by a
// reviewer becomes the project's quota at the class's site; an upload beyond it is refused naming used,
// asked and granted; the 80 % and 100 % alerts are mailed once per crossing; the worker's scan books what a
// job wrote (no link followed); a company's TB-months on its invoice equal its usage page's; and an
// allocation granted before storage lines existed gets its mode's default from the migration.
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDb, MIGRATIONS_FOLDER, type Db, type DbHandle } from '~/db/client';
import { allocations, mailOutbox, notifications, storageDays, storageUsage } from '~/db/schema';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import { invoiceContent } from '~/server/documents/invoice-content';
import { translate } from '~/server/i18n';
import { issueInvoice, issueMonthlyInvoices, getInvoice } from '~/server/services/billing/invoices';
import { syncCatalogue } from '~/server/services/catalogue';
import { loadActor } from '~/server/services/identity/accounts';
import { insertSettledJob } from '~/server/testing/invoice-fixtures';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { actAsTenant } from '~/server/services/transaction';
import { recordStorageChange, recordStorageMeasurement, scanStorage, storageQuotaGb } from './storage';
import { jobDirOf, workspaceOf, type SiteRoots } from './workspace';

const GB = 1_000_000_000;
const TB = 1_000_000_000_000;
const JENA = 'de-jena';
const KAJAANI = 'fi-kajaani';

/** The rows of a raw statement: PGlite answers { rows }, postgres.js the rows themselves. */
function rowsOf<T>(result: unknown): T[] {
  return (result && typeof result === 'object' && 'rows' in result ? (result as { rows: T[] }).rows : result) as T[];
}

async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string; field?: string }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    const cause = error.cause as { field?: string } | undefined;
    return { code: error.code, message: error.message, ...(cause?.field ? { field: cause.field } : {}) };
  }
  throw new Error('the call was not refused');
}

describe.each(dbTargets())('storage allocations on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
    reviewer = await createStaff(db, 'reviewer');
  });
  afterAll(async () => handle?.close());

  /** A research project with a Development allocation on H100 (Jena) whose line asked for `storageGb`, granted as asked. */
  async function researchProject(storageGb: number, today = '2026-12-01') {
    const owner = await createTenant(db);
    const now = () => new Date(`${today}T12:00:00Z`);
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now });
    const project = await api.project.create({ title: `Corpus ${randomUUID().slice(0, 6)}`, abstract: 'Language models on a shared corpus.', fieldOfScience: 'Computer science', members: [] });
    const application = await api.application.create({
      projectId: project.id,
      accessModeId: 'development',
      periodStart: today,
      periodEnd: '2027-02-15',
      justification: 'A corpus and checkpoints need room beside the GPU-hours.',
      lines: [{ resourceClassId: 'h100', gpuHours: 100, storageGb }],
    });
    await api.application.submit({ applicationId: application.id });
    // The reviewer grants the GPU-hours and, naming no storage, the storage the line asked for.
    const decided = await callerFor(db, { userId: reviewer.userId, now }).staff.decide({ applicationId: application.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 100 }] });
    return { owner, api, projectId: project.id, applicationId: application.id, allocationId: decided.allocationIds[0]! };
  }

  const key = (p: { owner: { orgId: string }; projectId: string }, siteId = JENA) => ({ orgId: p.owner.orgId, projectId: p.projectId, siteId });

  it('turns the storage a line asked for into the quota at the class’s site, and refuses an upload beyond it naming used, asked and granted', async () => {
    const p = await researchProject(10);
    const [allocation] = await db.select({ storageGb: allocations.storageGb }).from(allocations).where(eq(allocations.id, p.allocationId));
    expect(allocation!.storageGb).toBe(10);
    expect((await p.api.application.get({ applicationId: p.applicationId })).lines).toEqual([expect.objectContaining({ resourceClassId: 'h100', storageGb: 10 })]);
    expect(await storageQuotaGb(db, p.projectId, JENA)).toBe(10);
    expect(await storageQuotaGb(db, p.projectId, KAJAANI)).toBe(0);

    await recordStorageChange(db, { ...key(p), deltaBytes: 6_900_000_000, now: new Date('2026-12-02T09:00:00Z') });
    const upload = { projectId: p.projectId, site: JENA, path: `corpus-${randomUUID()}.tar` };
    expect(await refusal(p.api.files.startUpload({ ...upload, size: 12_400_000_000 }))).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      field: 'size',
      message: 'This upload needs 12.4 GB but the project has 3.1 GB of its 10 GB left at Jena (used 6.9 GB): free space or ask for more storage.',
    });
    const inGerman = callerFor(db, { userId: p.owner.userId, orgId: p.owner.orgId, locale: 'de' });
    expect((await refusal(inGerman.files.startUpload({ ...upload, size: 12_400_000_000 }))).message).toBe(
      'Dieser Upload braucht 12,4 GB, das Projekt hat am Standort Jena aber nur noch 3,1 GB von 10 GB frei (belegt: 6,9 GB): Geben Sie Speicher frei oder beantragen Sie mehr.',
    );
    // What fits goes through; at a site without a storage line nothing does.
    await expect(p.api.files.startUpload({ ...upload, size: 3_100_000_000 })).resolves.toMatchObject({ orgId: p.owner.orgId });
    const elsewhere = await refusal(p.api.files.startUpload({ ...upload, site: KAJAANI, size: 1 }));
    expect(elsewhere).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'size' });
    expect(elsewhere.message).toContain('no storage granted at Kajaani');

    // The project page's figures: used, granted, the share.
    expect(await p.api.project.storage({ projectId: p.projectId })).toEqual([expect.objectContaining({ siteId: JENA, usedBytes: 6_900_000_000, grantedGb: 10, usedPercent: 69 })]);
  });

  it('mails the 80 % alert once per crossing, and the 100 % one, to the project’s PI and managers and the owners', async () => {
    const p = await researchProject(10);
    const at = (day: number, hour = 9) => new Date(Date.UTC(2026, 11, day, hour));
    const mails = async (subject: string) =>
      (await db.select({ to: mailOutbox.toAddress, subject: mailOutbox.subject }).from(mailOutbox).where(and(eq(mailOutbox.kind, 'budget_threshold'), eq(mailOutbox.toAddress, p.owner.email)))).filter((m) => m.subject === subject);
    const subject80 = translate('en', 'mail.storage80.subject', { project: (await p.api.project.get({ projectId: p.projectId })).project.title, site: 'Jena' });
    const subjectFull = subject80.replace('is 80 % full', 'is full');

    expect((await recordStorageChange(db, { ...key(p), deltaBytes: 7 * GB, now: at(2) })).alerted).toBeNull();
    expect((await recordStorageChange(db, { ...key(p), deltaBytes: 1.2 * GB, now: at(3) })).alerted).toBe(80);
    expect((await recordStorageChange(db, { ...key(p), deltaBytes: 0.5 * GB, now: at(4) })).alerted).toBeNull();
    // The scan finding the same: no second alert.
    expect((await recordStorageMeasurement(db, { ...key(p), bytes: 9 * GB, now: at(5) })).alerted).toBeNull();
    expect(await mails(subject80)).toHaveLength(1);
    expect((await mails(subject80))[0]!.subject).toBe(`The storage of ${subject80.split('The storage of ')[1]}`);

    // Falling below 80 % and crossing it again is a new crossing.
    await recordStorageChange(db, { ...key(p), deltaBytes: -4 * GB, now: at(6) });
    expect((await recordStorageChange(db, { ...key(p), deltaBytes: 3.5 * GB, now: at(7) })).alerted).toBe(80);
    expect(await mails(subject80)).toHaveLength(2);

    // Past the quota (a job wrote beyond it): the 100 % alert, once.
    expect((await recordStorageMeasurement(db, { ...key(p), bytes: 10.5 * GB, now: at(8) })).alerted).toBe(100);
    expect((await recordStorageMeasurement(db, { ...key(p), bytes: 11 * GB, now: at(9) })).alerted).toBeNull();
    expect(await mails(subjectFull)).toHaveLength(1);
    const notices = await db.select({ key: notifications.messageKey, params: notifications.params }).from(notifications).where(eq(notifications.userId, p.owner.userId));
    expect(notices.filter((n) => n.key === 'notice.storage80')).toHaveLength(2);
    const full = notices.filter((n) => n.key === 'notice.storageFull');
    expect(full).toHaveLength(1);
    expect(full[0]!.params).toMatchObject({ site: 'Jena', used: 10.5, granted: 10, percent: 105 });
    // And a full workspace takes nothing more, not even an empty file.
    expect(await refusal(p.api.files.startUpload({ projectId: p.projectId, site: JENA, path: 'empty.txt', size: 0 }))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'size' });
  });

  it('books a delete in the tenant’s own request (row-level security), and never another tenant’s workspace', async () => {
    const p = await researchProject(10);
    const other = await researchProject(10);
    await recordStorageChange(db, { ...key(p), deltaBytes: 9 * GB, now: new Date('2026-12-02T09:00:00Z') });
    // As `files.remove` books the bytes it removed, inside the request's transaction as the tenant.
    const asTenant = (orgId: string, change: Parameters<typeof recordStorageChange>[1]) =>
      db.transaction(async (tx) => {
        await actAsTenant(tx, orgId, 'write');
        return recordStorageChange(tx, change);
      });
    expect(await asTenant(p.owner.orgId, { ...key(p), deltaBytes: -2 * GB, now: new Date('2026-12-02T10:00:00Z') })).toMatchObject({ bytes: 7 * GB, grantedGb: 10 });
    await expect(asTenant(p.owner.orgId, { ...key(other), deltaBytes: GB, now: new Date('2026-12-02T10:00:00Z') })).rejects.toThrow();
    expect(await db.select().from(storageUsage).where(eq(storageUsage.projectId, other.projectId))).toEqual([]);
  });

  it('books what a job wrote into its folder when the worker scans, following no link', async () => {
    const p = await researchProject(50);
    const root = mkdtempSync(path.join(tmpdir(), 'portal-storage-scan-'));
    const roots: SiteRoots = { rootOf: (siteId) => path.join(root, siteId) };
    try {
      const workspace = workspaceOf(roots, JENA, p.projectId);
      // As a fine-tuning job leaves its folder: logs, metrics, a checkpoint in a subfolder, and links a job
      // may plant (to /etc, to a big file outside) that must not be counted.
      const jobDir = jobDirOf(workspace, randomUUID());
      await mkdir(path.join(jobDir, 'checkpoint'), { recursive: true });
      await writeFile(path.join(jobDir, 'stdout.log'), 'step 1 loss 2.31\n'.repeat(1000));
      await writeFile(path.join(jobDir, 'metrics.jsonl'), Buffer.alloc(4096, 1));
      await writeFile(path.join(jobDir, 'checkpoint', 'adapter.safetensors'), Buffer.alloc(3 * 1024 * 1024, 7));
      await symlink('/etc', path.join(jobDir, 'etc'));
      const outside = path.join(root, 'outside.bin');
      await writeFile(outside, Buffer.alloc(1024 * 1024));
      await symlink(outside, path.join(jobDir, 'big-link'));
      const written = 17 * 1000 + 4096 + 3 * 1024 * 1024;

      const now = new Date('2026-12-03T10:15:00Z');
      const scan = await scanStorage(db, roots, () => now, { projectIds: [p.projectId], siteIds: [JENA] });
      expect(scan).toEqual({ scanned: 1, changed: 1, alerts: 0, failed: 0 });
      const [row] = await db.select().from(storageUsage).where(and(eq(storageUsage.projectId, p.projectId), eq(storageUsage.siteId, JENA)));
      expect(row).toMatchObject({ bytes: written, scannedAt: now, alertedPercent: 0 });
      expect(await p.api.project.storage({ projectId: p.projectId })).toEqual([expect.objectContaining({ siteId: JENA, usedBytes: written, grantedGb: 50 })]);

      // The job writes more, then removes its checkpoint: the day keeps its high-water mark, the figure follows.
      await writeFile(path.join(jobDir, 'model.safetensors'), Buffer.alloc(2 * 1024 * 1024, 3));
      await scanStorage(db, roots, () => new Date('2026-12-03T10:30:00Z'), { projectIds: [p.projectId], siteIds: [JENA] });
      await rm(path.join(jobDir, 'checkpoint'), { recursive: true });
      await scanStorage(db, roots, () => new Date('2026-12-03T10:45:00Z'), { projectIds: [p.projectId], siteIds: [JENA] });
      const [after] = await db.select({ bytes: storageUsage.bytes }).from(storageUsage).where(and(eq(storageUsage.projectId, p.projectId), eq(storageUsage.siteId, JENA)));
      expect(after!.bytes).toBe(written + 2 * 1024 * 1024 - 3 * 1024 * 1024);
      const [day] = await db.select({ bytes: storageDays.bytes }).from(storageDays).where(and(eq(storageDays.projectId, p.projectId), eq(storageDays.day, '2026-12-03')));
      expect(day!.bytes).toBe(written + 2 * 1024 * 1024);

      // The workspace gone (the centre archived it): the next scan books nothing held.
      await rm(workspace.dir, { recursive: true });
      await scanStorage(db, roots, () => new Date('2026-12-04T08:00:00Z'), { projectIds: [p.projectId], siteIds: [JENA] });
      expect((await p.api.project.storage({ projectId: p.projectId }))[0]).toMatchObject({ usedBytes: 0 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  describe('a company’s TB-months', () => {
    /** A verified company with a credit line (1,000 GB of storage at every site) on a project of its own. */
    async function company() {
      const owner = await createTenant(db, { kind: 'company' });
      const now = () => new Date('2026-04-10T09:00:00Z');
      await callerFor(db, { userId: admin.userId, now }).staff.changeTenantStatus({ orgId: owner.orgId, action: 'verify', reason: 'Company checked' });
      const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now });
      const project = await api.project.create({ title: `Models ${randomUUID().slice(0, 6)}`, abstract: 'Fine-tuning models on our data.', workloadKind: 'fine_tuning', members: [] });
      const credit = await callerFor(db, { userId: admin.userId, now }).staff.grantCreditLine({ projectId: project.id, amountEuros: 10_000, periodStart: '2026-01-01', periodEnd: '2026-12-31', reason: 'Credit line for tests' });
      return { owner, api, projectId: project.id, allocationId: credit.id };
    }

    it('bills on the invoice exactly the TB-months the usage page shows, a line per site', async () => {
      const c = await company();
      expect(await storageQuotaGb(db, c.projectId, JENA)).toBe(1000);
      // The price list says what a TB-month costs at each site.
      expect((await c.api.catalogue.priceList()).storage).toEqual(expect.arrayContaining([expect.objectContaining({ siteId: JENA, centsPerTbMonth: 2000, allowed: true }), expect.objectContaining({ siteId: KAJAANI, centsPerTbMonth: 1500 })]));
      const at = (iso: string) => new Date(iso);
      // Jena: 2 TB from the 3rd; a scan on the 10th finds 1.5 TB (the day began with 2), an upload makes it
      // 2.5; a scan on the 20th finds 3.3 TB, and nothing is measured after it. Kajaani: 0.7 TB from the 15th.
      await recordStorageChange(db, { ...key(c), deltaBytes: 2 * TB, now: at('2026-03-03T10:00:00Z') });
      await recordStorageMeasurement(db, { ...key(c), bytes: 1.5 * TB, now: at('2026-03-10T08:00:00Z') });
      await recordStorageChange(db, { ...key(c), deltaBytes: TB, now: at('2026-03-10T20:00:00Z') });
      await recordStorageMeasurement(db, { ...key(c), bytes: 3.3 * TB, now: at('2026-03-20T12:00:00Z') });
      await recordStorageChange(db, { ...key(c, KAJAANI), deltaBytes: 0.7 * TB, now: at('2026-03-15T00:30:00Z') });
      await insertSettledJob(db, { orgId: c.owner.orgId, projectId: c.projectId, allocationId: c.allocationId, userId: c.owner.userId }, { gpuSeconds: 4 * 3600, costCents: 1160, endedAt: '2026-03-12T10:00:00Z' });

      // Jena: 2 + 6 × 2 + 2.5 + 9 × 2.5 + 3.3 + 11 × 3.3 = 78.6 TB-days ÷ 31 = 2.535 TB-months; × €20 = €50.71.
      // Kajaani: 17 × 0.7 = 11.9 TB-days ÷ 31 = 0.384 TB-months; × €15 = €5.76.
      const page = await c.api.report.storage({ period: { month: '2026-03' } });
      expect(page.charged).toBe(true);
      expect(page.sites).toEqual([
        expect.objectContaining({ siteId: JENA, milliTbMonths: 2535, costCents: 5071, centsPerTbMonth: 2000 }),
        expect.objectContaining({ siteId: KAJAANI, milliTbMonths: 384, costCents: 576, centsPerTbMonth: 1500 }),
      ]);
      expect(page.totals).toEqual({ milliTbMonths: 2535 + 384, costCents: 5071 + 576 });
      expect(page.rows.map((r) => [r.siteId, r.milliTbMonths])).toEqual([[JENA, 2535], [KAJAANI, 384]]);

      const invoice = await issueInvoice(db, { orgId: c.owner.orgId, month: '2026-03', now: at('2026-04-02T09:00:00Z') });
      const storageLines = invoice!.lines.filter((l) => l.kind === 'storage');
      expect(storageLines.map((l) => [l.siteId, l.milliTbMonths, l.unitPriceCentsPerTbMonth, l.netCents, l.description, l.descriptionDe])).toEqual([
        [JENA, 2535, 2000, 5071, 'Storage, Jena', 'Speicher, Jena'],
        [KAJAANI, 384, 1500, 576, 'Storage, Kajaani', 'Speicher, Kajaani'],
      ]);
      // One figure, one value: each site's line is the usage page's figure and price.
      for (const line of storageLines) {
        const site = page.sites.find((s) => s.siteId === line.siteId)!;
        expect([line.milliTbMonths, line.netCents]).toEqual([site.milliTbMonths, site.costCents]);
      }
      // After the compute line; the totals and VAT over all lines.
      expect(invoice!.lines.map((l) => [l.lineNo, l.kind])).toEqual([[1, 'compute'], [2, 'storage'], [3, 'storage']]);
      expect(invoice!.netCents).toBe(1160 + 5071 + 576);
      expect(invoice!.vatCents).toBe(Math.round(((1160 + 5071 + 576) * 19) / 100));
      const content = invoiceContent(await getInvoice(db, { staff: (await loadActor(db, admin.userId))! }, invoice!.id, '2026-04-02'), (k, params) => translate('en', k, params), 'en');
      expect(content.rows[1]!.slice(1, 6)).toEqual(['Storage, Jena', '—', '2.535 TB-months', '€20.00 / TB-month', '€50.71']);

      // The usage CSV says the same; and a scan in April fills March's unmeasured days with what the page already counted.
      expect((await c.api.report.storageCsv({ period: { month: '2026-03' } })).csv).toContain(`,${JENA},2.535,50.71`);
      await recordStorageMeasurement(db, { ...key(c), bytes: 3.3 * TB, now: at('2026-04-10T08:00:00Z') });
      expect((await c.api.report.storage({ period: { month: '2026-03' } })).sites[0]).toMatchObject({ milliTbMonths: 2535, costCents: 5071 });
      const [filled] = await db.select({ n: sql<number>`count(*)::int` }).from(storageDays).where(and(eq(storageDays.projectId, c.projectId), eq(storageDays.siteId, JENA), sql`${storageDays.day} between '2026-03-01' and '2026-03-31'`));
      expect(filled!.n).toBe(29); // the 3rd to the 31st
    });

    it('invoices a company that only stored data in the month, in the monthly run', async () => {
      const c = await company();
      await recordStorageChange(db, { ...key(c), deltaBytes: 31 * TB, now: new Date('2026-05-01T00:00:00Z') });
      await recordStorageChange(db, { ...key(c), deltaBytes: -31 * TB, now: new Date('2026-05-02T00:00:00Z') });
      const run = await issueMonthlyInvoices(db, new Date('2026-06-01T00:20:00Z'));
      const issued = run.issued.find((i) => i.orgId === c.owner.orgId);
      expect(issued).toBeDefined();
      const invoice = await getInvoice(db, { staff: (await loadActor(db, admin.userId))! }, issued!.invoiceId, '2026-06-01');
      // 31 TB on the 1st and on the 2nd (the day began with it): 62 TB-days ÷ 31 = 2 TB-months × €20.
      expect(invoice.lines.map((l) => [l.kind, l.milliTbMonths, l.netCents])).toEqual([['storage', 2000, 4000]]);
    });

    it('shows a research tenant its TB-months without a price', async () => {
      const p = await researchProject(100);
      await recordStorageChange(db, { ...key(p), deltaBytes: 30 * GB, now: new Date('2026-12-01T13:00:00Z') });
      const report = await callerFor(db, { userId: p.owner.userId, orgId: p.owner.orgId, now: () => new Date('2027-01-05T00:00:00Z') }).report.storage({ period: { month: '2026-12' } });
      // 30 GB for 31 days of December: 0.03 TB-months. Its price list: storage not charged.
      expect((await p.api.catalogue.priceList()).storage.every((row) => row.centsPerTbMonth === 0)).toBe(true);
      expect(report).toMatchObject({ charged: false, totals: { milliTbMonths: 30, costCents: null }, sites: [expect.objectContaining({ siteId: JENA, milliTbMonths: 30, costCents: null })] });
    });
  });
});

describe.each(dbTargets())('storage lines for allocations granted before them, on %s', (target) => {
  it('gives an established company’s credit line the pay-as-you-go default and a research allocation its mode’s', async () => {
    const handle = await openTestDb(target, { migrate: false });
    const folder = mkdtempSync(path.join(tmpdir(), 'portal-migrations-'));
    try {
      // The migrations up to 0051, the last before storage lines.
      const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number; tag: string }[] };
      journal.entries = journal.entries.filter((e) => e.idx <= 51);
      mkdirSync(path.join(folder, 'meta'));
      writeFileSync(path.join(folder, 'meta/_journal.json'), JSON.stringify(journal));
      for (const e of journal.entries) copyFileSync(path.join(MIGRATIONS_FOLDER, `${e.tag}.sql`), path.join(folder, `${e.tag}.sql`));
      await migrateDb(handle, folder);

      // What such a portal held: a site and class, the access modes, an established company with a credit
      // line and a research group with a Development and a Playground allocation.
      const db = handle.db;
      const userId = rowsOf<{ id: string }>(await db.execute(sql`insert into users (email, name) values ('old@example.org', 'Old') returning id`))[0]!.id;
      await db.execute(sql`insert into sites (id, name, country, in_eu, pue_milli, grid_gco2_per_kwh, heat_reuse_permille) values ('de-jena', 'Jena', 'DE', true, 1080, 380, 700)`);
      await db.execute(sql`insert into resource_classes (id, name, site_id, gpu_model, gpus_per_node, nodes, max_walltime_seconds, gpu_idle_power_w, gpu_max_power_w, node_base_power_w, peak_tflops) values ('h100', 'H100', 'de-jena', 'H100', 8, 16, 172800, 70, 700, 1500, 989)`);
      await db.execute(sql`insert into access_modes (id, name, duration_days, review_path, target_decision_working_days) values ('development', 'Development', 91, 'single', 5), ('playground', 'Playground', 30, 'instant', 0)`);
      const ids = { company: randomUUID(), research: randomUUID(), companyProject: randomUUID(), researchProject: randomUUID(), dev: randomUUID(), play: randomUUID(), line: randomUUID(), devAlloc: randomUUID(), playAlloc: randomUUID() };
      await db.execute(sql`insert into organisations (id, name, kind, country, status) values (${ids.company}, 'Old Company GmbH', 'company', 'DE', 'active'), (${ids.research}, 'Old Lab', 'academic', 'DE', 'active')`);
      await db.execute(sql`insert into projects (id, org_id, title, abstract, created_by) values (${ids.companyProject}, ${ids.company}, 'Pay as you go', 'Jobs.', ${userId}), (${ids.researchProject}, ${ids.research}, 'Corpus', 'Models.', ${userId})`);
      await db.execute(sql`insert into applications (id, project_id, org_id, access_mode_id, status, period_start, period_end, justification, created_by) values
        (${ids.dev}, ${ids.researchProject}, ${ids.research}, 'development', 'approved', '2026-01-01', '2026-03-01', 'Old request', ${userId}),
        (${ids.play}, ${ids.researchProject}, ${ids.research}, 'playground', 'approved', '2026-01-01', '2026-01-20', 'Old request', ${userId})`);
      await db.execute(sql`insert into application_lines (application_id, resource_class_id, requested_gpu_seconds) values (${ids.dev}, 'h100', 360000)`);
      await db.execute(sql`insert into allocations (id, project_id, org_id, resource_class_id, application_id, unit, period_start, period_end) values
        (${ids.line}, ${ids.companyProject}, ${ids.company}, null, null, 'cents', '2026-01-01', '2026-12-31'),
        (${ids.devAlloc}, ${ids.researchProject}, ${ids.research}, 'h100', ${ids.dev}, 'gpu_seconds', '2026-01-01', '2026-03-01'),
        (${ids.playAlloc}, ${ids.researchProject}, ${ids.research}, 'h100', ${ids.play}, 'gpu_seconds', '2026-01-01', '2026-01-20')`);

      await migrateDb(handle);
      await syncCatalogue(db, DEFAULT_CATALOGUE);
      const rows = await db.select({ id: allocations.id, storageGb: allocations.storageGb }).from(allocations);
      expect(Object.fromEntries(rows.map((r) => [r.id, r.storageGb]))).toEqual({ [ids.line]: 1000, [ids.devAlloc]: 1000, [ids.playAlloc]: 50 });
      // The company's quota at Jena is its credit line's; the research group's both allocations'.
      expect(await storageQuotaGb(db, ids.companyProject, 'de-jena')).toBe(1000);
      expect(await storageQuotaGb(db, ids.researchProject, 'de-jena')).toBe(1050);
      // The request's line asked for what its allocation now holds.
      expect(rowsOf<{ gb: number }>(await db.execute(sql`select requested_storage_gb as gb from application_lines where application_id = ${ids.dev}`)).map((r) => Number(r.gb))).toEqual([1000]);
    } finally {
      await handle.close();
    }
  });
});
