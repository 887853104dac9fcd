// Monthly invoices on PGlite and, with TEST_DATABASE_URL, on real Postgres: totals exact to the cent
// and reproducible from the jobs, one line per resource class and tariff, gap-free numbers under
// concurrent issuing, one invoice per tenant and month, immutability (no API to edit, the database
// refuses), credit notes, and who may read what. Usage is created by inserting settled jobs directly.
import { randomUUID } from 'node:crypto';
import { and, eq, gte, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { auditEvents, creditNotes, documentCounters, invoiceLines, invoices, jobs, ledgerEntries, outsideJobs } from '~/db/schema';
import type { SchedulerPort, UsageReporting } from '~/server/core/scheduler/port';
import { importOutsideUsage } from '~/server/services/cluster/outside-usage';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { appRouter } from '~/server/api/root';
import { parseDocumentNumber } from '~/server/core/billing/invoicing';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { loadActor } from '~/server/services/identity/accounts';
import { getInvoice, issueCreditNote, issueInvoice, issueMonthlyInvoices } from './invoices';

const H = 3600;
/** The test's clock: mid-April 2026, so March 2026 is over and can be invoiced. */
const NOW = new Date('2026-04-10T09:00:00Z');
const clock = () => NOW;
const SITE: Record<string, string> = { h100: 'de-jena', b200: 'fi-kajaani', 'h100-ch': 'ch-lugano' };

type Tenant = Awaited<ReturnType<typeof createTenant>> & { projectId: string; allocationId: string };

/** The text of an error and its causes, to find the database's own message. */
function errorText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) parts.push(String((e as { message?: unknown }).message));
  return parts.join(' | ');
}

describe.each(dbTargets())('invoices on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;
  let a: Tenant;
  let b: Tenant;

  function asUser(who: { userId: string; orgId?: string }, now: () => Date = clock) {
    return callerFor(db, { userId: who.userId, orgId: who.orgId, now });
  }

  /** companyTenant signs up a company, has staff verify it, and gives it a project with a credit line. */
  async function companyTenant(name?: string): Promise<Tenant> {
    const tenant = await createTenant(db, { kind: 'company', name });
    await asUser(admin).staff.changeTenantStatus({ orgId: tenant.orgId, action: 'verify', reason: 'Company checked' });
    const project = await asUser(tenant).project.create({ title: `Models ${randomUUID().slice(0, 6)}`, abstract: 'Training models for invoices.', workloadKind: 'training', members: [] });
    const credit = await asUser(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 100_000, periodStart: '2025-01-01', periodEnd: '2028-12-31', reason: 'Credit line for tests' });
    return { ...tenant, projectId: project.id, allocationId: credit.id };
  }

  /** insertJob writes a job as the reconciler leaves it once settled (or, with settled: false, still running). */
  async function insertJob(
    tenant: { userId: string; orgId: string; projectId: string; allocationId: string },
    job: { resourceClassId?: string; centsPerGpuHour: number; gpuSeconds: number; costCents: number; endedAt: string; startedAt?: string; settled?: boolean; unit?: 'cents' | 'gpu_seconds' },
  ) {
    const resourceClassId = job.resourceClassId ?? 'h100';
    const settled = job.settled ?? true;
    const endedAt = new Date(job.endedAt);
    const startedAt = new Date(job.startedAt ?? endedAt.getTime() - Math.max(60, job.gpuSeconds / 4) * 1000);
    const [row] = await db
      .insert(jobs)
      .values({
        orgId: tenant.orgId,
        projectId: tenant.projectId,
        allocationId: tenant.allocationId,
        userId: tenant.userId,
        idempotencyKey: randomUUID(),
        name: 'train',
        kind: 'training',
        resourceClassId,
        siteId: SITE[resourceClassId]!,
        gpus: 4,
        nodes: 1,
        walltimeSeconds: 48 * H,
        image: 'nvcr.io/nvidia/pytorch:24.05-py3',
        command: 'torchrun train.py',
        env: {},
        state: settled ? 'COMPLETED' : 'RUNNING',
        reservedAmount: 100_000,
        reservedUnit: job.unit ?? 'cents',
        centsPerGpuHour: job.centsPerGpuHour,
        submittedAt: new Date(startedAt.getTime() - 60_000),
        startedAt,
        endedAt: settled ? endedAt : null,
        gpuSeconds: settled ? job.gpuSeconds : null,
        costCents: settled ? job.costCents : null,
        chargedAmount: settled ? job.costCents : null,
        energyWh: settled ? 1000 : null,
        settledAt: settled ? new Date(endedAt.getTime() + 2000) : null,
      })
      .returning({ id: jobs.id });
    return row!.id;
  }

  /** The settled jobs of a tenant that ended in a month, summed straight from the jobs table. */
  async function jobSums(orgId: string, from: string, to: string) {
    const [row] = await db
      .select({ cost: sql<string>`coalesce(sum(${jobs.costCents}), 0)`, gpuSeconds: sql<string>`coalesce(sum(${jobs.gpuSeconds}), 0)`, n: sql<number>`count(*)::int` })
      .from(jobs)
      .where(and(eq(jobs.orgId, orgId), isNotNull(jobs.settledAt), gte(jobs.endedAt, new Date(from)), lt(jobs.endedAt, new Date(to)), sql`${jobs.gpuSeconds} > 0`));
    return { costCents: Number(row!.cost), gpuSeconds: Number(row!.gpuSeconds), jobs: row!.n };
  }

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
    reviewer = await createStaff(db, 'reviewer');
    a = await companyTenant(`Acme Models ${randomUUID().slice(0, 6)}`);
    b = await companyTenant(`Beta Robotics ${randomUUID().slice(0, 6)}`);

    // Tenant A, March 2026. Hand-computed costs (GPU-s × ct/GPU-h ÷ 3600, rounded half up):
    await insertJob(a, { centsPerGpuHour: 290, gpuSeconds: 4 * H, costCents: 1_160, endedAt: '2026-03-01T00:00:00Z' }); // 4 h × 2.90 € = 11.60 €
    await insertJob(a, { centsPerGpuHour: 290, gpuSeconds: 2.5 * H, costCents: 725, endedAt: '2026-03-12T10:00:00Z' }); // 2.5 h × 2.90 € = 7.25 €
    await insertJob(a, { centsPerGpuHour: 290, gpuSeconds: 1, costCents: 0, endedAt: '2026-03-13T10:00:00Z' }); // 0.08 ct → 0
    await insertJob(a, { centsPerGpuHour: 310, gpuSeconds: 10 * H, costCents: 3_100, endedAt: '2026-03-20T10:00:00Z' }); // new tariff mid-month: 10 h × 3.10 €
    await insertJob(a, { resourceClassId: 'b200', centsPerGpuHour: 490, gpuSeconds: 1_212, costCents: 165, endedAt: '2026-03-31T23:59:59Z' }); // 164.97 ct → 165
    // Not in March: ended the last second of February, the first instant of April; never ran; still running (started in April).
    await insertJob(a, { centsPerGpuHour: 290, gpuSeconds: H, costCents: 290, endedAt: '2026-02-28T23:59:59Z' });
    await insertJob(a, { centsPerGpuHour: 290, gpuSeconds: H, costCents: 290, endedAt: '2026-04-01T00:00:00Z' });
    await insertJob(a, { centsPerGpuHour: 290, gpuSeconds: 0, costCents: 0, endedAt: '2026-03-15T10:00:00Z' });
    await insertJob(a, { centsPerGpuHour: 290, gpuSeconds: H, costCents: 290, endedAt: '2026-04-05T00:00:00Z', startedAt: '2026-04-02T00:00:00Z', settled: false });
    // Tenant B, March 2026: 3 h on h100.
    await insertJob(b, { centsPerGpuHour: 290, gpuSeconds: 3 * H, costCents: 870, endedAt: '2026-03-05T08:00:00Z' });
  });
  afterAll(async () => handle?.close());

  it('issues lines per resource class and tariff whose totals are exact and reproducible from the jobs', async () => {
    const invoice = await issueInvoice(db, { orgId: a.orgId, month: '2026-03', now: NOW });
    expect(invoice).not.toBeNull();
    expect(invoice!.created).toBe(true);
    expect(invoice!.number).toBe('INV-2026-000001');
    expect(invoice!.periodMonth).toBe('2026-03-01');
    expect(invoice!.issuedAt.toISOString()).toBe(NOW.toISOString());
    expect(invoice!.recipient).toEqual({ name: a.orgName, country: 'DE' });
    expect(invoice!.lines.map(({ lineNo, resourceClassId, description, jobs: n, gpuSeconds, unitPriceCentsPerGpuHour, netCents }) => ({ lineNo, resourceClassId, description, jobs: n, gpuSeconds, unitPriceCentsPerGpuHour, netCents }))).toEqual([
      { lineNo: 1, resourceClassId: 'b200', description: 'B200 partition (Kajaani)', jobs: 1, gpuSeconds: 1_212, unitPriceCentsPerGpuHour: 490, netCents: 165 },
      { lineNo: 2, resourceClassId: 'h100', description: 'H100 partition (Jena)', jobs: 3, gpuSeconds: 6.5 * H + 1, unitPriceCentsPerGpuHour: 290, netCents: 1_885 },
      { lineNo: 3, resourceClassId: 'h100', description: 'H100 partition (Jena)', jobs: 1, gpuSeconds: 10 * H, unitPriceCentsPerGpuHour: 310, netCents: 3_100 },
    ]);
    // 165 + 1,885 + 3,100 = 5,150 ct; 19 % of 51.50 € = 9.785 € → 9.79 € (half up); gross 61.29 €.
    expect({ net: invoice!.netCents, vatPermille: invoice!.vatPermille, vat: invoice!.vatCents, gross: invoice!.grossCents }).toEqual({ net: 5_150, vatPermille: 190, vat: 979, gross: 6_129 });

    // Reproducible: the sum of the jobs' costs is the net; each line is GPU-hours × its unit price.
    const sums = await jobSums(a.orgId, '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z');
    expect(sums).toEqual({ costCents: 5_150, gpuSeconds: 1_212 + 6.5 * H + 1 + 10 * H, jobs: 5 });
    for (const line of invoice!.lines) expect(Math.floor((line.gpuSeconds * line.unitPriceCentsPerGpuHour + 1800) / 3600), `line ${line.lineNo}`).toBe(line.netCents);

    // Persisted as returned, and audited.
    const [stored] = await db.select().from(invoices).where(eq(invoices.id, invoice!.id));
    expect(stored).toMatchObject({ netCents: 5_150, vatCents: 979, grossCents: 6_129, number: 'INV-2026-000001' });
    expect(await db.select().from(invoiceLines).where(eq(invoiceLines.invoiceId, invoice!.id))).toHaveLength(3);
    const audit = await db.select().from(auditEvents).where(and(eq(auditEvents.targetId, invoice!.id), eq(auditEvents.action, 'invoice.issued')));
    expect(audit).toHaveLength(1);
  });

  it('returns the existing invoice when issued again, also concurrently, without using a number', async () => {
    const first = await issueInvoice(db, { orgId: a.orgId, month: '2026-03', now: NOW });
    const [again, andAgain] = await Promise.all([
      issueInvoice(db, { orgId: a.orgId, month: '2026-03', now: NOW }),
      asUser(admin).invoice.issue({ orgId: a.orgId, month: '2026-03' }),
    ]);
    expect(first!.created).toBe(false);
    expect(again!.id).toBe(first!.id);
    expect(andAgain.invoice!.id).toBe(first!.id);
    expect(andAgain.invoice!.created).toBe(false);
    const rows = await db.select({ id: invoices.id }).from(invoices).where(eq(invoices.orgId, a.orgId));
    expect(rows).toHaveLength(1);

    // B issued twice at once: one invoice, and the next number of the series.
    const [x, y] = await Promise.all([issueInvoice(db, { orgId: b.orgId, month: '2026-03', now: NOW }), issueInvoice(db, { orgId: b.orgId, month: '2026-03', now: NOW })]);
    expect(x!.id).toBe(y!.id);
    expect([x!.created, y!.created].sort()).toEqual([false, true]);
    expect(x!.number).toBe('INV-2026-000002');
    expect({ net: x!.netCents, vat: x!.vatCents, gross: x!.grossCents }).toEqual({ net: 870, vat: 165, gross: 1_035 }); // 165.3 → 165
    const [counter] = await db.select().from(documentCounters).where(eq(documentCounters.series, 'invoice-2026'));
    expect(counter!.lastValue).toBe(2);
  });

  it('gives no invoice for a month without usage, and refuses months that are not over or jobs not yet settled', async () => {
    expect(await issueInvoice(db, { orgId: a.orgId, month: '2026-01', now: NOW })).toBeNull();
    expect(await issueInvoice(db, { orgId: b.orgId, month: '2026-02', now: NOW })).toBeNull();
    await expect(issueInvoice(db, { orgId: a.orgId, month: '2026-04', now: NOW })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED', key: 'invoice.error.monthNotOver' });

    // A job that started in February and has not been settled may still end (as reported) in February.
    const c = await companyTenant();
    await insertJob(c, { centsPerGpuHour: 290, gpuSeconds: 2 * H, costCents: 580, endedAt: '2026-02-10T00:00:00Z' });
    const open = await insertJob(c, { centsPerGpuHour: 290, gpuSeconds: H, costCents: 290, endedAt: '2026-03-01T00:30:00Z', startedAt: '2026-02-28T23:00:00Z', settled: false });
    await expect(issueInvoice(db, { orgId: c.orgId, month: '2026-02', now: NOW })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED', key: 'invoice.error.jobsOpen', params: { count: 1, month: '2026-02' } });
    // The reconciler settles it: it ended at 23:40 on the last day of February, so it belongs to February.
    await db
      .update(jobs)
      .set({ state: 'COMPLETED', endedAt: new Date('2026-02-28T23:40:00Z'), gpuSeconds: 40 * 60 * 4, costCents: 773, chargedAmount: 773, settledAt: NOW })
      .where(eq(jobs.id, open));
    const invoice = await issueInvoice(db, { orgId: c.orgId, month: '2026-02', now: NOW });
    // 580 + 773 (9,600 GPU-s × 2.90 € = 7.7333 € → 7.73 €) = 1,353; VAT 257.07 → 257.
    expect(invoice!.lines).toHaveLength(1);
    expect(invoice!.lines[0]).toMatchObject({ jobs: 2, gpuSeconds: 7_200 + 9_600, netCents: 1_353 });
    expect({ net: invoice!.netCents, vat: invoice!.vatCents, gross: invoice!.grossCents }).toEqual({ net: 1_353, vat: 257, gross: 1_610 });
    expect(invoice!.number).toBe('INV-2026-000003');
  });

  it('numbers concurrently issued invoices 1..n of the year with no gap and no duplicate', async () => {
    const tenants = [];
    for (let i = 0; i < 20; i++) tenants.push(await companyTenant());
    for (const [i, tenant] of tenants.entries()) {
      await insertJob(tenant, { centsPerGpuHour: 290, gpuSeconds: (i + 1) * H, costCents: (i + 1) * 290, endedAt: `2027-01-${String(i + 1).padStart(2, '0')}T12:00:00Z` });
    }
    const now = new Date('2027-02-03T08:00:00Z');
    // Every tenant twice at once: the losing duplicate rolls back the number it took.
    const results = await Promise.all(tenants.flatMap((tenant) => [issueInvoice(db, { orgId: tenant.orgId, month: '2027-01', now }), issueInvoice(db, { orgId: tenant.orgId, month: '2027-01', now })]));
    expect(results.filter((r) => r?.created)).toHaveLength(20);
    const byTenant = new Map<string, string>();
    for (const invoice of results) {
      expect(invoice).not.toBeNull();
      const seen = byTenant.get(invoice!.orgId);
      if (seen) expect(invoice!.number).toBe(seen);
      byTenant.set(invoice!.orgId, invoice!.number);
    }
    const sequences = [...byTenant.values()].map((n) => parseDocumentNumber(n)!).map((p) => {
      expect(p).toMatchObject({ kind: 'invoice', year: 2027 });
      return p.sequence;
    });
    expect(sequences.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const stored = await db.select({ number: invoices.number }).from(invoices).where(sql`${invoices.number} like 'INV-2027-%'`);
    expect(stored).toHaveLength(20);
    const [counter] = await db.select().from(documentCounters).where(eq(documentCounters.series, 'invoice-2027'));
    expect(counter!.lastValue).toBe(20);
    // Each invoice matches its tenant's one job: (i + 1) h × 2.90 €.
    for (const [i, tenant] of tenants.entries()) {
      const invoice = results.find((r) => r!.orgId === tenant.orgId)!;
      expect(invoice.netCents).toBe((i + 1) * 290);
      expect(invoice.vatCents).toBe(Math.floor(((i + 1) * 290 * 190 + 500) / 1000));
    }
  });

  it('cannot be edited: no procedure changes an invoice, and the database refuses', async () => {
    const procedures = Object.keys(appRouter._def.procedures).filter((p) => p.startsWith('invoice.'));
    // Payments, reversals and block lifts add rows of their own (append-only too); none changes the invoice.
    expect(procedures.sort()).toEqual([
      'invoice.creditNote',
      'invoice.get',
      'invoice.issue',
      'invoice.issueMonthly',
      'invoice.liftOverdueBlock',
      'invoice.list',
      'invoice.openItems',
      'invoice.openItemsCsv',
      'invoice.recordPayment',
      'invoice.reversePayment',
      'invoice.staffGet',
      'invoice.staffList',
    ]);
    // No procedure's name starts with a verb that changes a record (creditNote issues a new document).
    const changing = /^(update|edit|delete|remove|set|change|cancel|void|patch|modify|correct|replace|upsert)/i;
    expect(procedures.filter((p) => changing.test(p.slice('invoice.'.length)))).toEqual([]);

    const [invoice] = await db.select().from(invoices).where(eq(invoices.orgId, a.orgId));
    await expect(db.update(invoices).set({ netCents: 1 }).where(eq(invoices.id, invoice!.id))).rejects.toSatisfy((e: unknown) => errorText(e).includes('append-only'));
    await expect(db.delete(invoices).where(eq(invoices.id, invoice!.id))).rejects.toSatisfy((e: unknown) => errorText(e).includes('append-only'));
    await expect(db.update(invoiceLines).set({ netCents: 1 }).where(eq(invoiceLines.invoiceId, invoice!.id))).rejects.toSatisfy((e: unknown) => errorText(e).includes('append-only'));
    await expect(db.delete(invoiceLines).where(eq(invoiceLines.invoiceId, invoice!.id))).rejects.toSatisfy((e: unknown) => errorText(e).includes('append-only'));
    const [unchanged] = await db.select().from(invoices).where(eq(invoices.id, invoice!.id));
    expect(unchanged).toEqual(invoice);
  });

  it('lists credit notes with the invoice, changes nothing in it, and refuses more than remains', async () => {
    const [invoice] = await db.select().from(invoices).where(eq(invoices.orgId, a.orgId));
    const asAdmin = asUser(admin);
    const note = await asAdmin.invoice.creditNote({ invoiceId: invoice!.id, netCents: 1_000, reason: 'Node failure cost a training run' });
    // 10.00 € + 19 % = 11.90 €
    expect(note).toMatchObject({ number: 'CN-2026-000001', netCents: 1_000, vatCents: 190, grossCents: 1_190, orgId: a.orgId, issuedBy: admin.userId });

    await expect(asAdmin.invoice.creditNote({ invoiceId: invoice!.id, netCents: 4_151, reason: 'Too much' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(asUser(reviewer).invoice.creditNote({ invoiceId: invoice!.id, netCents: 1, reason: 'Not an admin' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asAdmin.invoice.creditNote({ invoiceId: invoice!.id, netCents: 0, reason: 'Nothing' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(asAdmin.invoice.creditNote({ invoiceId: randomUUID(), netCents: 1, reason: 'No such invoice' })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    // The rest, twice at once: exactly one succeeds; together the notes reverse the invoice to the cent.
    const adminActor = (await loadActor(db, admin.userId))!;
    const settled = await Promise.allSettled([
      issueCreditNote(db, adminActor, { invoiceId: invoice!.id, netCents: 4_150, reason: 'Goodwill, rest of the month', now: NOW }),
      issueCreditNote(db, adminActor, { invoiceId: invoice!.id, netCents: 4_150, reason: 'Goodwill, rest of the month', now: NOW }),
    ]);
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    const refused = settled.find((s) => s.status === 'rejected');
    expect(refused?.status === 'rejected' && refused.reason).toMatchObject({ code: 'BAD_REQUEST', key: 'invoice.error.creditExceedsRemaining', params: { remaining: 0 } });
    const second = settled.find((s) => s.status === 'fulfilled');
    expect(second?.status === 'fulfilled' && second.value).toMatchObject({ number: 'CN-2026-000002', netCents: 4_150, vatCents: 789, grossCents: 4_939 }); // 979 − 190 = 789

    const [unchanged] = await db.select().from(invoices).where(eq(invoices.id, invoice!.id));
    expect(unchanged).toEqual(invoice);
    const view = await asUser(a).invoice.get({ id: invoice!.id });
    expect(view.creditNotes.map((n) => n.number)).toEqual(['CN-2026-000001', 'CN-2026-000002']);
    expect(view.creditNotes.reduce((s, n) => s + n.grossCents, 0)).toBe(invoice!.grossCents);
    expect({ net: view.netCents, gross: view.grossCents, credited: view.creditedNetCents, remaining: view.remainingNetCents }).toEqual({ net: 5_150, gross: 6_129, credited: 5_150, remaining: 0 });
    const listed = await asUser(a).invoice.list();
    expect(listed.find((i) => i.id === invoice!.id)).toMatchObject({ creditedNetCents: 5_150, creditedGrossCents: 6_129 });

    await expect(db.update(creditNotes).set({ netCents: 1 }).where(eq(creditNotes.invoiceId, invoice!.id))).rejects.toSatisfy((e: unknown) => errorText(e).includes('append-only'));
    const [cnCounter] = await db.select().from(documentCounters).where(eq(documentCounters.series, 'credit-note-2026'));
    expect(cnCounter!.lastValue).toBe(2);
  });

  it('shows a tenant only its own invoices, to owners and managers; staff see all', async () => {
    const [invoiceA] = await db.select().from(invoices).where(eq(invoices.orgId, a.orgId));
    const [invoiceB] = await db.select().from(invoices).where(eq(invoices.orgId, b.orgId));
    const manager = await addMember(db, a, 'manager');
    const member = await addMember(db, a, 'member');

    expect((await asUser(a).invoice.list()).map((i) => i.id)).toEqual([invoiceA!.id]);
    expect((await asUser(manager).invoice.list()).map((i) => i.id)).toEqual([invoiceA!.id]);
    expect((await asUser(manager).invoice.get({ id: invoiceA!.id })).lines).toHaveLength(3);
    await expect(asUser(member).invoice.list()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asUser(member).invoice.get({ id: invoiceA!.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });

    expect((await asUser(b).invoice.list()).map((i) => i.id)).toEqual([invoiceB!.id]);
    await expect(asUser(b).invoice.get({ id: invoiceA!.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(asUser(a).invoice.get({ id: invoiceB!.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(asUser(a).invoice.get({ id: randomUUID() })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // Acting for another tenant's id through the cookie does not help either.
    await expect(asUser({ userId: b.userId, orgId: a.orgId }).invoice.get({ id: invoiceA!.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });

    // Staff read everything (any staff role) but tenants' procedures are not theirs.
    expect((await asUser(reviewer).invoice.staffGet({ id: invoiceA!.id })).number).toBe(invoiceA!.number);
    const all = await asUser(reviewer).invoice.staffList({});
    expect(all.map((i) => i.id)).toEqual(expect.arrayContaining([invoiceA!.id, invoiceB!.id]));
    expect((await asUser(reviewer).invoice.staffList({ orgId: b.orgId })).map((i) => i.id)).toEqual([invoiceB!.id]);
    await expect(asUser(a).invoice.staffList({})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asUser(a).invoice.staffGet({ id: invoiceA!.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asUser(reviewer).invoice.issue({ orgId: a.orgId, month: '2026-03' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asUser(a).invoice.issueMonthly()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(callerFor(db, {}).invoice.list()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(getInvoice(db, {}, invoiceA!.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('bills a job run around the portal and charged to the credit line on the line of its class and price, as charged', async () => {
    const c = await companyTenant();
    await insertJob(c, { centsPerGpuHour: 290, gpuSeconds: H, costCents: 290, endedAt: '2026-03-10T10:00:00Z' });
    // From a member's shell (sbatch -A <project>): 2 GPUs for an hour, ended in March, imported with the next sync.
    const scripted = scriptedScheduler();
    const port: SchedulerPort & UsageReporting = {
      ...scripted.port,
      outsideJobs: () =>
        Promise.resolve([
          { cluster: 'jena', schedulerJobId: '4711', name: 'sweep.sh', account: c.projectId, partition: 'h100', resourceClassId: 'h100', user: 'mika', state: 'COMPLETED', startedAt: new Date('2026-03-20T09:00:00Z'), endedAt: new Date('2026-03-20T10:00:00Z'), gpuSeconds: 2 * H },
        ]),
    };
    expect(await importOutsideUsage(db, port, new Date('2026-04-02T00:00:00Z'))).toEqual({ imported: 1, charged: 1 });
    const [outside] = await db.select().from(outsideJobs).where(eq(outsideJobs.schedulerJobId, '4711'));
    expect(outside).toMatchObject({ chargedAmount: 580, centsPerGpuHour: 290 });

    const invoice = await issueInvoice(db, { orgId: c.orgId, month: '2026-03', now: NOW });
    // One line: the portal's job and the outside one share class and price; the net is what the two were charged.
    expect(invoice!.lines).toMatchObject([{ resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 2, gpuSeconds: 3 * H, netCents: 290 + 580 }]);
    expect(invoice!.netCents).toBe(870);
    // The outside charge in the ledger is the amount billed for it.
    const charged = await db.select({ amount: ledgerEntries.amount }).from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, c.allocationId), eq(ledgerEntries.kind, 'charge'), isNull(ledgerEntries.jobId)));
    expect(charged.map((r) => r.amount)).toEqual([580]);
  });

  it('gives academic tenants no invoices', async () => {
    const uni = await createTenant(db, { kind: 'academic' });
    const alloc = await activeAllocation(db, uni, admin, { gpuHours: 100, today: '2026-03-01' });
    await insertJob({ ...uni, ...alloc }, { centsPerGpuHour: 180, gpuSeconds: 2 * H, costCents: 360, endedAt: '2026-03-10T00:00:00Z', unit: 'gpu_seconds' });
    expect(await asUser(uni).invoice.list()).toEqual([]);
    await expect(asUser(admin).invoice.issue({ orgId: uni.orgId, month: '2026-03' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    const run = await issueMonthlyInvoices(db, NOW);
    expect(run.issued.map((i) => i.orgId)).not.toContain(uni.orgId);
    expect(await db.select().from(invoices).where(eq(invoices.orgId, uni.orgId))).toEqual([]);
  });

  it('validates the month of an on-demand issue', async () => {
    const asAdmin = asUser(admin);
    for (const month of ['2026-13', '2026-3', '26-03', '2026-03-01', '1999-12', '']) {
      await expect(asAdmin.invoice.issue({ orgId: a.orgId, month }), month).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    }
    await expect(asAdmin.invoice.issue({ orgId: a.orgId, month: '2026-05' })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'That month is in the future.' });
    await expect(asAdmin.invoice.issue({ orgId: a.orgId, month: '2026-04' })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    await expect(asAdmin.invoice.issue({ orgId: randomUUID(), month: '2026-03' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await asAdmin.invoice.issue({ orgId: b.orgId, month: '2000-01' })).toEqual({ invoice: null });
  });

  it('issues last month for every company tenant without one, after the grace period, once', async () => {
    const d = await companyTenant();
    const e = await companyTenant();
    await insertJob(d, { centsPerGpuHour: 290, gpuSeconds: 8 * H, costCents: 2_320, endedAt: '2026-03-30T00:00:00Z' });
    await insertJob(e, { resourceClassId: 'h100-ch', centsPerGpuHour: 260, gpuSeconds: 90 * 60, costCents: 390, endedAt: '2026-03-02T00:00:00Z' });
    const early = await issueMonthlyInvoices(db, new Date('2026-04-01T00:05:00Z'));
    expect(early).toEqual({ month: '2026-03', due: false, issued: [], waiting: [] });

    const before = await db.select({ id: invoices.id }).from(invoices);
    const run = await asUser(admin).invoice.issueMonthly();
    expect(run.month).toBe('2026-03');
    expect(run.due).toBe(true);
    expect(run.waiting).toEqual([]);
    expect(run.issued.map((i) => i.orgId).sort()).toEqual([d.orgId, e.orgId].sort());
    const after = await db.select({ id: invoices.id }).from(invoices);
    expect(after.length - before.length).toBe(2);
    const invoiceE = await getInvoice(db, { staff: (await loadActor(db, admin.userId))! }, run.issued.find((i) => i.orgId === e.orgId)!.invoiceId);
    expect(invoiceE.lines).toMatchObject([{ resourceClassId: 'h100-ch', gpuSeconds: 5_400, unitPriceCentsPerGpuHour: 260, netCents: 390 }]);
    expect({ net: invoiceE.netCents, vat: invoiceE.vatCents, gross: invoiceE.grossCents }).toEqual({ net: 390, vat: 74, gross: 464 }); // 74.1 → 74
    const audit = await db.select().from(auditEvents).where(and(eq(auditEvents.targetId, invoiceE.id), eq(auditEvents.action, 'invoice.issued')));
    expect(audit[0]).toMatchObject({ actorUserId: admin.userId, isStaffAction: true });

    const again = await issueMonthlyInvoices(db, NOW);
    expect(again.issued).toEqual([]);
    expect((await db.select({ id: invoices.id }).from(invoices)).length).toBe(after.length);
  });
});
