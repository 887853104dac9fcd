// Payment status of invoices (issue #24) on PGlite and, with TEST_DATABASE_URL, on real Postgres,
// through the tRPC caller: part and full payments, a credit note settling the rest, overpayment
// refused on the field, reversals, overdue after the due date, reminders once per level on their
// days (the daily task run twice), the overdue block refusing a submission until staff lift it
// (audited), the open-items CSV, and tenants seeing only their own payments.
import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { auditEvents, dailyTaskRuns, invoicePayments, invoiceReminders, jobs, mailOutbox } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { parseCsv } from '~/server/core/csv';
import { readAsTenant } from '~/server/api/tenant-transaction';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { sendInvoiceReminders } from './payments';

// The block policy is configuration read once per process (server/env.js): on for this file, 30 days.
process.env.INVOICE_OVERDUE_BLOCK_DAYS = '30';
const REMINDER_DAYS = [7, 21];

const H = 3600;
/** Invoices for March 2026 are issued on 1 April, due 15 April (14 days' terms). */
const ISSUED = new Date('2026-04-01T09:00:00Z');
const at = (day: string) => new Date(`${day}T09:00:00Z`);

describe.each(dbTargets())('payments on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;

  const asUser = (who: { userId: string; orgId?: string }, now: Date = ISSUED) => callerFor(db, { userId: who.userId, orgId: who.orgId, now: () => now });

  /** A verified company with a billing profile, a credit line and one settled job in March 2026, and its March invoice. */
  async function invoicedCompany(costCents: number, country: 'DE' | 'AT' = 'DE') {
    const tenant = await createTenant(db, { kind: 'company', name: `Paying ${randomUUID().slice(0, 6)} GmbH` });
    await asUser(admin).staff.changeTenantStatus({ orgId: tenant.orgId, action: 'verify', reason: 'Company checked' });
    const billingEmail = `accounts.${randomUUID().slice(0, 6)}@paying.example`;
    await asUser(tenant).organisation.setBillingProfile(
      country === 'DE'
        ? { legalName: tenant.orgName, street: 'Am Markt 1', postcode: '07743', city: 'Jena', country: 'DE', vatId: 'DE136695976', billingEmail }
        : { legalName: tenant.orgName, street: 'Ring 1', postcode: '1010', city: 'Wien', country: 'AT', vatId: 'ATU13585627', billingEmail },
    );
    const project = await asUser(tenant).project.create({ title: `Models ${randomUUID().slice(0, 6)}`, abstract: 'Training models to be paid for.', workloadKind: 'training', members: [] });
    const credit = await asUser(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 100_000, periodStart: '2025-01-01', periodEnd: '2028-12-31', reason: 'Credit line for tests' });
    const endedAt = new Date('2026-03-10T12:00:00Z');
    await db.insert(jobs).values({
      orgId: tenant.orgId,
      projectId: project.id,
      allocationId: credit.id,
      userId: tenant.userId,
      idempotencyKey: randomUUID(),
      name: 'train',
      kind: 'training',
      resourceClassId: 'h100',
      siteId: 'de-jena',
      gpus: 4,
      nodes: 1,
      walltimeSeconds: 48 * H,
      image: 'pytorch:2',
      command: 'torchrun train.py',
      env: {},
      state: 'COMPLETED',
      reservedAmount: 100_000,
      reservedUnit: 'cents',
      centsPerGpuHour: 290,
      submittedAt: new Date(endedAt.getTime() - 3 * H * 1000),
      startedAt: new Date(endedAt.getTime() - 2 * H * 1000),
      endedAt,
      gpuSeconds: 8 * H,
      costCents,
      chargedAmount: costCents,
      energyWh: 1000,
      settledAt: new Date(endedAt.getTime() + 2000),
    });
    const { invoice } = await asUser(admin).invoice.issue({ orgId: tenant.orgId, month: '2026-03' });
    return { ...tenant, billingEmail, allocationId: credit.id, invoice: invoice! };
  }

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
    reviewer = await createStaff(db, 'reviewer');
  });
  afterAll(async () => handle?.close());

  it('goes from issued to partly paid to paid, refusing an overpayment on the amount, and shows the company the same', async () => {
    const company = await invoicedCompany(10_000);
    const { invoice } = company;
    expect(invoice).toMatchObject({ netCents: 10_000, vatCents: 1_900, grossCents: 11_900 });
    const staff = asUser(admin, at('2026-04-05'));
    expect(await staff.invoice.staffGet({ id: invoice.id })).toMatchObject({ status: 'issued', paidCents: 0, openCents: 11_900, dueDate: '2026-04-15', daysOverdue: 0 });

    const part = await asUser(admin, new Date('2026-04-05T08:00:00Z')).invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-04-04', amountCents: 5_000, reference: 'SEPA 4711' });
    expect(part).toMatchObject({ amountCents: 5_000, paidCents: 5_000, openCents: 6_900, status: 'partlyPaid' });
    // More than is open: refused on the amount, naming what is open; nothing written.
    const over = staff.invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-04-05', amountCents: 6_901, reference: 'SEPA 4712' });
    await expect(over).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { field: 'amountCents' } });
    await expect(over).rejects.toThrow(`At most 69 € of invoice ${invoice.number} are open`);
    await expect(staff.invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-04-06', amountCents: 100, reference: 'future' })).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { field: 'paidOn' } });
    await expect(staff.invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-03-31', amountCents: 100, reference: 'early' })).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { field: 'paidOn' } });
    await expect(staff.invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-04-05', amountCents: 0, reference: 'zero' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(asUser(reviewer, at('2026-04-05')).invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-04-05', amountCents: 100, reference: 'reviewer' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await db.select().from(invoicePayments).where(eq(invoicePayments.invoiceId, invoice.id))).toHaveLength(1);

    const full = await staff.invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-04-05', amountCents: 6_900, reference: 'SEPA 4713' });
    expect(full).toMatchObject({ paidCents: 11_900, openCents: 0, status: 'paid' });
    // Long after the due date a paid invoice stays paid.
    const owner = asUser(company, at('2026-06-01'));
    expect(await owner.invoice.get({ id: invoice.id })).toMatchObject({ status: 'paid', openCents: 0, paidCents: 11_900, daysOverdue: 0, payments: [{ amountCents: 5_000, reference: 'SEPA 4711' }, { amountCents: 6_900, reference: 'SEPA 4713' }] });
    expect((await owner.invoice.list()).find((i) => i.id === invoice.id)).toMatchObject({ status: 'paid', openCents: 0 });

    const audit = await db.select().from(auditEvents).where(and(eq(auditEvents.targetId, invoice.id), eq(auditEvents.action, 'invoice.payment_recorded')));
    expect(audit.map((a) => (a.data as { status: string }).status).sort()).toEqual(['paid', 'partlyPaid']);
    expect(audit.every((a) => a.actorUserId === admin.userId && a.isStaffAction)).toBe(true);

    // A payment is never changed or deleted: the database refuses.
    await expect(db.execute(sql`update invoice_payments set amount_cents = 1 where invoice_id = ${invoice.id}`)).rejects.toThrow();
    await expect(db.execute(sql`delete from invoice_payments where invoice_id = ${invoice.id}`)).rejects.toThrow();

    // A bounced transfer is reversed once (audited); the invoice is open again.
    const reversed = await staff.invoice.reversePayment({ paymentId: full.id, reason: 'Transfer bounced' });
    expect(reversed).toMatchObject({ amountCents: -6_900, reversesId: full.id, openCents: 6_900, status: 'partlyPaid' });
    await expect(staff.invoice.reversePayment({ paymentId: full.id, reason: 'Again' })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await db.select().from(auditEvents).where(and(eq(auditEvents.targetId, invoice.id), eq(auditEvents.action, 'invoice.payment_reversed')))).toHaveLength(1);
  });

  it('lets a credit note settle the rest', async () => {
    const { invoice, ...company } = await invoicedCompany(20_000, 'AT');
    // Reverse charge for the Austrian company: gross = net.
    expect(invoice).toMatchObject({ netCents: 20_000, vatCents: 0, grossCents: 20_000 });
    const staff = asUser(admin, at('2026-04-20'));
    await staff.invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-04-10', amountCents: 15_000, reference: 'Wire 1' });
    await staff.invoice.creditNote({ invoiceId: invoice.id, netCents: 5_000, reason: 'Goodwill for a failed run' });
    expect(await asUser(company, at('2026-04-20')).invoice.get({ id: invoice.id })).toMatchObject({ status: 'paid', openCents: 0, paidCents: 15_000, creditedGrossCents: 5_000 });
    expect((await staff.invoice.openItems()).map((i) => i.invoiceId)).not.toContain(invoice.id);
  });

  it('makes an open invoice overdue after its due date, reminds on its days once each, and lists it in the open items CSV', async () => {
    const company = await invoicedCompany(30_000);
    const { invoice } = company;
    expect((await asUser(company, at('2026-04-15')).invoice.get({ id: invoice.id })).status).toBe('issued');
    expect(await asUser(company, at('2026-04-16')).invoice.get({ id: invoice.id })).toMatchObject({ status: 'overdue', daysOverdue: 1, openCents: 35_700 });

    const remindersOf = async () => (await db.select().from(invoiceReminders).where(eq(invoiceReminders.invoiceId, invoice.id))).map((r) => `${r.level}@${r.sentOn}`).sort();
    const mailsTo = async (address: string) => (await db.select().from(mailOutbox).where(eq(mailOutbox.toAddress, address))).map((m) => m.subject).filter((s) => /reminder|erinnerung/i.test(s)).sort();

    // Day 6 overdue: nothing yet. Day 7: the first reminder; the same day again does nothing.
    expect((await sendInvoiceReminders(db, at('2026-04-21'), REMINDER_DAYS)).sent.filter((s) => s.invoiceId === invoice.id)).toEqual([]);
    expect((await sendInvoiceReminders(db, at('2026-04-22'), REMINDER_DAYS)).sent.filter((s) => s.invoiceId === invoice.id)).toEqual([{ invoiceId: invoice.id, number: invoice.number, level: 1 }]);
    expect(await sendInvoiceReminders(db, new Date('2026-04-22T18:00:00Z'), REMINDER_DAYS)).toMatchObject({ ran: false, sent: [] });
    // The next days until day 21: no second mail of the first level.
    expect((await sendInvoiceReminders(db, at('2026-04-23'), REMINDER_DAYS)).sent.filter((s) => s.invoiceId === invoice.id)).toEqual([]);
    expect(await remindersOf()).toEqual(['1@2026-04-22']);
    const firstSubject = `Payment reminder: invoice ${invoice.number}`;
    expect(await mailsTo(company.email)).toEqual([firstSubject]);
    // The accounts department of a German company reads German.
    expect(await mailsTo(company.billingEmail)).toEqual([`Zahlungserinnerung: Rechnung ${invoice.number}`]);

    // Day 21: the second, once.
    expect((await sendInvoiceReminders(db, at('2026-05-06'), REMINDER_DAYS)).sent.filter((s) => s.invoiceId === invoice.id)).toEqual([{ invoiceId: invoice.id, number: invoice.number, level: 2 }]);
    expect((await sendInvoiceReminders(db, at('2026-05-07'), REMINDER_DAYS)).sent.filter((s) => s.invoiceId === invoice.id)).toEqual([]);
    expect(await remindersOf()).toEqual(['1@2026-04-22', '2@2026-05-06']);
    expect(await mailsTo(company.email)).toEqual([firstSubject, `Second payment reminder: invoice ${invoice.number}`].sort());
    expect(await mailsTo(company.billingEmail)).toEqual([`Zahlungserinnerung: Rechnung ${invoice.number}`, `Zweite Zahlungserinnerung: Rechnung ${invoice.number}`].sort());
    expect(await db.select().from(dailyTaskRuns).where(and(eq(dailyTaskRuns.task, 'invoice-reminders'), eq(dailyTaskRuns.day, '2026-04-22')))).toHaveLength(1);
    expect((await asUser(company, at('2026-05-07')).invoice.get({ id: invoice.id })).reminders).toEqual([{ level: 1, sentOn: '2026-04-22' }, { level: 2, sentOn: '2026-05-06' }]);

    // The open items: a row for the finance system, amounts in cents and days overdue.
    const { csv } = await asUser(reviewer, at('2026-05-07')).invoice.openItemsCsv();
    const [header, ...rows] = parseCsv(csv);
    expect(header).toEqual(['invoice_number', 'tenant', 'issue_date', 'due_date', 'gross_cents', 'paid_cents', 'credited_cents', 'open_cents', 'days_overdue', 'status']);
    expect(rows.find((r) => r[0] === invoice.number)).toEqual([invoice.number, company.orgName, '2026-04-01', '2026-04-15', '35700', '0', '0', '35700', '22', 'overdue']);
  });

  it('refuses new submissions of a tenant with an invoice overdue beyond the policy until staff lift it (audited)', async () => {
    const company = await invoicedCompany(40_000);
    const { invoice } = company;
    const scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 60, now: () => new Date(), clusterId: `pay-${randomUUID().slice(0, 8)}` });
    const submitAt = (day: string) =>
      callerFor(db, { userId: company.userId, now: () => at(day), scheduler }).job.submit({
        allocationId: company.allocationId,
        resourceClassId: 'h100',
        name: 'after the due date',
        kind: 'training',
        gpus: 1,
        nodes: 1,
        walltimeMinutes: 60,
        image: 'pytorch:2',
        command: 'python train.py',
        idempotencyKey: `pay-${randomUUID()}`,
      });
    // The job form's estimate says so before submitting, with the same rule and invoice numbers.
    const overdueShown = async (day: string) =>
      (await callerFor(db, { userId: company.userId, now: () => at(day), scheduler }).job.estimate({ allocationId: company.allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60 })).overdueInvoices;
    // 30 days overdue: still allowed (the policy says "beyond 30").
    expect(await overdueShown('2026-05-15')).toEqual([]);
    await expect(submitAt('2026-05-15')).resolves.toHaveProperty('state');
    expect(await overdueShown('2026-05-16')).toEqual([invoice.number]);
    // 31 days overdue: refused, naming the invoice; no job written.
    const before = (await db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(eq(jobs.orgId, company.orgId)))[0]!.n;
    const refused = submitAt('2026-05-16');
    await expect(refused).rejects.toMatchObject({ code: 'PRECONDITION_FAILED', cause: { key: 'job.invoicesOverdue' } });
    await expect(refused).rejects.toThrow(`invoices are overdue: ${invoice.number}.`);
    expect((await db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(eq(jobs.orgId, company.orgId)))[0]!.n).toBe(before);

    // Staff lift it until a day, with a reason: submissions pass until then, and again are refused after.
    await expect(asUser(reviewer, at('2026-05-16')).invoice.liftOverdueBlock({ orgId: company.orgId, untilDay: '2026-05-20', reason: 'Payment promised by phone' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asUser(admin, at('2026-05-16')).invoice.liftOverdueBlock({ orgId: company.orgId, untilDay: '2026-05-15', reason: 'In the past' })).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { field: 'untilDay' } });
    await asUser(admin, at('2026-05-16')).invoice.liftOverdueBlock({ orgId: company.orgId, untilDay: '2026-05-20', reason: 'Payment promised by phone' });
    const [audit] = await db.select().from(auditEvents).where(and(eq(auditEvents.orgId, company.orgId), eq(auditEvents.action, 'tenant.overdue_block_lifted')));
    expect(audit).toMatchObject({ actorUserId: admin.userId, reason: 'Payment promised by phone', data: { untilDay: '2026-05-20' }, isStaffAction: true });
    expect(await overdueShown('2026-05-20')).toEqual([]);
    await expect(submitAt('2026-05-20')).resolves.toHaveProperty('state');
    expect(await overdueShown('2026-05-21')).toEqual([invoice.number]);
    await expect(submitAt('2026-05-21')).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });

    // Paid: no block any more.
    await asUser(admin, at('2026-05-21')).invoice.recordPayment({ invoiceId: invoice.id, paidOn: '2026-05-21', amountCents: 47_600, reference: 'Finally' });
    expect(await overdueShown('2026-05-21')).toEqual([]);
    await expect(submitAt('2026-05-21')).resolves.toHaveProperty('state');
  });

  it('shows a tenant only its own payments, also where a query forgets its tenant filter', async () => {
    const a = await invoicedCompany(1_000);
    const b = await invoicedCompany(2_000);
    await asUser(admin, at('2026-04-05')).invoice.recordPayment({ invoiceId: a.invoice.id, paidOn: '2026-04-05', amountCents: 500, reference: 'A pays' });
    await asUser(admin, at('2026-04-05')).invoice.recordPayment({ invoiceId: b.invoice.id, paidOn: '2026-04-05', amountCents: 700, reference: 'B pays' });
    await expect(asUser(b, at('2026-04-05')).invoice.get({ id: a.invoice.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(asUser(b, at('2026-04-05')).invoice.openItems()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    // Row-level security: B's transaction reading every payment row sees only B's.
    const seen = await readAsTenant(db, b.orgId, (tx) => tx.select({ orgId: invoicePayments.orgId, reference: invoicePayments.reference }).from(invoicePayments));
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.orgId === b.orgId)).toBe(true);
    expect(seen.map((p) => p.reference)).not.toContain('A pays');
  });
});
