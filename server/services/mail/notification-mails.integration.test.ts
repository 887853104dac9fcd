// Notices that become mails (issue #12): each in the reader's language through the real SMTP sink,
// written in the event's transaction, following each person's preference; the daily expiry reminder
// once per person and day however often and however concurrently it runs; budget thresholds once
// each; the invoice with its PDF attached. On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobs, mailOutbox, notificationPreferences, notifications, resourceClasses, users } from '~/db/schema';
import { createSmtpTransport } from '~/server/adapters/mail/smtp';
import { portalBaseUrl } from '~/server/env.js';
import { attachmentRenderer } from '~/server/mail-attachments';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { startSmtpSink, type SmtpSink } from '~/server/testing/smtp-sink';
import { issueInvoice } from '~/server/services/billing/invoices';
import { reserveBudget, settleJob } from '~/server/services/ledger/ledger';
import { actAsTenant } from '~/server/services/transaction';
import { deliverDueMails } from './mail';
import { settleFinishedJob } from '~/server/services/jobs/reconciler';
import { sendExpiryReminders } from './reminders';

const FROM = 'GPU Centre <portal@centre.example>';
const TODAY = '2026-12-01';
const H = 3600;

describe.each(dbTargets())('notification mails on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let sink: SmtpSink;
  let transport: ReturnType<typeof createSmtpTransport>;
  let admin: Awaited<ReturnType<typeof createStaff>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    sink = await startSmtpSink();
    transport = createSmtpTransport(sink.url);
    admin = await createStaff(db, 'admin');
  });
  afterAll(async () => {
    transport?.close();
    await sink?.stop();
    await handle?.close();
  });

  const clockOf = (day: string) => () => new Date(`${day}T12:00:00Z`);
  /** Sends everything due (far in the future, so nothing waits), attachments rendered as the worker does. */
  const deliver = () => deliverDueMails(db, transport, { from: FROM, now: () => new Date('2030-01-01T00:00:00Z'), limit: 1000, renderAttachment: attachmentRenderer(db) });
  const received = (email: string) => sink.received.filter((m) => m.to[0] === email);
  const outbox = (userId: string, kind: string) => db.select().from(mailOutbox).where(and(eq(mailOutbox.toUserId, userId), eq(mailOutbox.kind, kind))).orderBy(mailOutbox.id);
  const notices = (userId: string, key: string) => db.select().from(notifications).where(and(eq(notifications.userId, userId), eq(notifications.messageKey, key)));
  const setLocale = (userId: string, locale: string) => db.update(users).set({ locale }).where(eq(users.id, userId));

  it('reminds each person once a day of all their allocations at a mark, also when the task runs twice and two run at once', async () => {
    const owner = await createTenant(db, { name: `Reminder University ${randomUUID().slice(0, 6)}` });
    const lead = await addMember(db, owner, 'member');
    const bystander = await addMember(db, owner, 'member');
    // Two allocations whose last day is 2026-12-15 (periods end, exclusively, on the 16th): 7 days left on the 8th.
    const first = await activeAllocation(db, owner, admin, { gpuHours: 10, today: TODAY, periodEnd: '2026-12-16' });
    const second = await activeAllocation(db, owner, admin, { gpuHours: 10, today: TODAY, periodEnd: '2026-12-16' });
    await callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: clockOf(TODAY) }).project.setMember({ projectId: first.projectId, userId: lead.userId, role: 'manager' });
    await callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: clockOf(TODAY) }).project.setMember({ projectId: first.projectId, userId: bystander.userId, role: 'member' });

    const day7 = new Date('2026-12-08T06:00:00Z');
    const racing = await Promise.all([sendExpiryReminders(db, day7), sendExpiryReminders(db, day7)]);
    expect(racing.map((r) => r.ran).sort()).toEqual([false, true]);
    expect((await sendExpiryReminders(db, new Date('2026-12-08T18:00:00Z'))).ran).toBe(false);

    // The owner hears of both allocations in one mail; the project's manager of the one they manage; a plain member of none.
    expect(await outbox(owner.userId, 'allocation_expiring')).toHaveLength(1);
    expect(await outbox(lead.userId, 'allocation_expiring')).toHaveLength(1);
    expect(await outbox(bystander.userId, 'allocation_expiring')).toHaveLength(0);
    expect(await notices(owner.userId, 'notice.allocationsExpiring')).toHaveLength(1);
    expect(await notices(lead.userId, 'notice.allocationsExpiring')).toHaveLength(1);
    await deliver();
    const [ownerMail] = received(owner.email).filter((m) => m.subject.startsWith('Allocations ending soon'));
    expect(ownerMail!.subject).toBe('Allocations ending soon (2)');
    expect(ownerMail!.text.match(/7 days left, last day Dec 15, 2026/g)).toHaveLength(2);
    expect(ownerMail!.text).toContain(`${portalBaseUrl()}/allocations`);
    expect(received(lead.email).filter((m) => m.subject.startsWith('Allocations ending soon'))[0]!.text.match(/\d+ days? left/g)).toHaveLength(1);

    // The next day is at no mark: nothing. The last day (0 days left) is a new reminder.
    expect(await sendExpiryReminders(db, new Date('2026-12-09T06:00:00Z'))).toMatchObject({ ran: true, people: 0 });
    expect(await outbox(owner.userId, 'allocation_expiring')).toHaveLength(1);
    await Promise.all([sendExpiryReminders(db, new Date('2026-12-15T00:00:05Z')), sendExpiryReminders(db, new Date('2026-12-15T00:00:05Z'))]);
    const rows = await outbox(owner.userId, 'allocation_expiring');
    expect(rows.map((r) => r.dedupeKey)).toEqual([`expiry:${owner.userId}:2026-12-08`, `expiry:${owner.userId}:2026-12-15`]);
    expect(rows[1]!.textBody).toContain('today, Dec 15, 2026, is its last day');
    expect(second.allocationId).not.toBe(first.allocationId);
  });

  it('mails reviewers a submitted application and the PI the decision in their language, with the reviewer’s words', async () => {
    const owner = await createTenant(db, { name: `Entscheidungs-Institut ${randomUUID().slice(0, 6)}` });
    await setLocale(owner.userId, 'de');
    // A second reviewer who wants no mail of submissions: read from the tenant's own transaction (RLS lets it see staff choices).
    const quietReviewer = await createStaff(db, 'reviewer');
    await callerFor(db, { userId: quietReviewer.userId }).notification.setPreferences({ choices: [{ kind: 'application_submitted', email: false }] });
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: clockOf(TODAY) });
    const project = await asOwner.project.create({ title: 'Proteinfaltung', abstract: 'Faltung von Proteinen mit großen Modellen.', fieldOfScience: 'Biology', members: [] });
    const app = await asOwner.application.create({
      projectId: project.id,
      accessModeId: 'fast-lane',
      periodStart: TODAY,
      periodEnd: '2027-03-01',
      justification: 'Wir brauchen GPU-Zeit für die Faltung vieler Proteine.',
      lines: [{ resourceClassId: 'h100', gpuHours: 500 }],
    });
    await asOwner.application.submit({ applicationId: app.id });
    expect((await outbox(admin.userId, 'application_submitted')).filter((r) => r.subject.includes('Proteinfaltung'))).toHaveLength(1);
    expect(await outbox(quietReviewer.userId, 'application_submitted')).toHaveLength(0);
    expect(await notices(quietReviewer.userId, 'notice.applicationSubmitted')).toHaveLength(1);

    const comment = 'Bitte begründen Sie den Bedarf an 500 GPU-Stunden genauer.';
    await callerFor(db, { userId: admin.userId, now: clockOf(TODAY) }).staff.decide({ applicationId: app.id, outcome: 'rejected', comment });
    await deliver();
    const [mail] = received(owner.email).filter((m) => m.subject.includes('Proteinfaltung'));
    expect(mail!.subject).toBe('Ihr Antrag für Proteinfaltung wurde abgelehnt');
    expect(mail!.text).toContain(`Guten Tag Owner ${owner.orgName},`);
    expect(mail!.text).toContain(`Der Antrag für Proteinfaltung wurde abgelehnt: ${comment}`);
    expect(mail!.text).toContain(`Im Portal öffnen: ${portalBaseUrl()}/applications/${app.id}`);
    expect(mail!.html).toContain('lang="de"');
    const [reviewerMail] = received(admin.email).filter((m) => m.subject.includes('Proteinfaltung'));
    expect(reviewerMail!.subject).toBe(`${owner.orgName} submitted an application for Proteinfaltung`);
  });

  it('writes no mail where the person turned it off, but the bell notice still; a finished job mails only those who opted in', async () => {
    const owner = await createTenant(db, { name: `Quiet Lab ${randomUUID().slice(0, 6)}` });
    const asOwner = callerFor(db, { userId: owner.userId });
    const before = await asOwner.notification.preferences();
    expect(before.find((p) => p.kind === 'job_finished')).toMatchObject({ email: false, emailByDefault: false });
    expect(before.find((p) => p.kind === 'application_decided')).toMatchObject({ email: true });
    const after = await asOwner.notification.setPreferences({ choices: [{ kind: 'application_decided', email: false }, { kind: 'invitation', email: false }] });
    expect(after.find((p) => p.kind === 'application_decided')!.email).toBe(false);
    // The invitation is the link to join: it cannot be turned off.
    expect(after.find((p) => p.kind === 'invitation')!.email).toBe(true);

    const allocation = await activeAllocation(db, owner, admin, { gpuHours: 1000, today: TODAY });
    expect(await outbox(owner.userId, 'application_decided')).toHaveLength(0);
    expect(await notices(owner.userId, 'notice.applicationApproved')).toHaveLength(1);

    const [rc] = await db.select({ siteId: resourceClasses.siteId }).from(resourceClasses).where(eq(resourceClasses.id, 'h100'));
    /** A job that ran and ended, settled as the reconciler settles it. */
    const runJob = async (name: string, state: 'COMPLETED' | 'FAILED') => {
      const [job] = await db
        .insert(jobs)
        .values({ orgId: owner.orgId, projectId: allocation.projectId, allocationId: allocation.allocationId, userId: owner.userId, idempotencyKey: randomUUID(), name, kind: 'training', resourceClassId: 'h100', siteId: rc!.siteId, gpus: 1, nodes: 1, walltimeSeconds: H, image: 'img', command: 'run', env: {}, state: 'RUNNING', reservedAmount: H, reservedUnit: 'gpu_seconds', centsPerGpuHour: 290, startedAt: new Date('2026-12-01T10:00:00Z') })
        .returning();
      await db.transaction((tx) => reserveBudget(tx, { allocationId: allocation.allocationId, orgId: owner.orgId, jobId: job!.id, amount: H, actorUserId: owner.userId, today: TODAY }));
      const status = { portalJobId: job!.id, schedulerJobId: '1', state, pendingReason: null, startedAt: new Date('2026-12-01T10:00:00Z'), endedAt: new Date('2026-12-01T10:30:00Z'), exitCode: state === 'COMPLETED' ? 0 : 3, signal: null, nodeList: ['n1'], gpuSeconds: 1800, energyWh: 300, energyMeasured: false, siteId: rc!.siteId };
      expect(await settleFinishedJob(db, job!, status as Parameters<typeof settleFinishedJob>[2], new Date('2026-12-01T10:31:00Z'))).toBe(true);
      return job!.id;
    };
    await runJob('quiet-run', 'COMPLETED');
    expect(await outbox(owner.userId, 'job_finished')).toHaveLength(0);
    await asOwner.notification.setPreferences({ choices: [{ kind: 'job_finished', email: true }] });
    const failed = await runJob('loud-run', 'FAILED');
    const rows = await outbox(owner.userId, 'job_finished');
    expect(rows.map((r) => r.subject)).toEqual(['Job loud-run: Failed']);
    expect(rows[0]!.textBody).toContain('Your job loud-run has ended: Failed. Exit code 3 (Slurm 3:0). It used 0.5 GPU-h and cost €1.45.');
    expect(rows[0]!.textBody).toContain(`${portalBaseUrl()}/jobs/${failed}`);
  });

  it('mails the 80 % and 100 % budget thresholds once each', async () => {
    const owner = await createTenant(db, { name: `Budget Lab ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today: TODAY });
    for (const hours of [5, 3.5, 0.5, 0.5, 0.5]) {
      const jobId = randomUUID();
      await db.transaction((tx) => reserveBudget(tx, { allocationId, orgId: owner.orgId, jobId, amount: hours * H, actorUserId: owner.userId, today: TODAY }));
      await settleJob(db, { jobId, actualAmount: hours * H });
    }
    const rows = await outbox(owner.userId, 'budget_threshold');
    expect(rows.map((r) => r.dedupeKey)).toEqual([`budget:${allocationId}:800:${owner.userId}`, `budget:${allocationId}:1000:${owner.userId}`]);
    expect(rows.map((r) => r.subject)).toEqual([expect.stringContaining('80 % of the budget'), expect.stringContaining('is used up')]);
  });

  it('mails a company’s owners its invoice with the PDF attached, and its suspension', async () => {
    const owner = await createTenant(db, { kind: 'company', name: `Invoice Models ${randomUUID().slice(0, 6)}` });
    const coOwner = await addMember(db, owner, 'owner');
    const manager = await addMember(db, owner, 'manager');
    const asAdmin = callerFor(db, { userId: admin.userId, now: () => new Date('2026-04-15T09:00:00Z') });
    await asAdmin.staff.changeTenantStatus({ orgId: owner.orgId, action: 'verify', reason: 'Company checked' });
    const project = await callerFor(db, { userId: owner.userId, orgId: owner.orgId }).project.create({ title: 'Invoice models', abstract: 'Training models to be invoiced.', workloadKind: 'training', members: [] });
    const credit = await asAdmin.staff.grantCreditLine({ projectId: project.id, amountEuros: 10_000, periodStart: '2025-01-01', periodEnd: '2028-12-31', reason: 'Credit line for tests' });
    const [rc] = await db.select({ siteId: resourceClasses.siteId }).from(resourceClasses).where(eq(resourceClasses.id, 'h100'));
    await db.insert(jobs).values({
      orgId: owner.orgId, projectId: project.id, allocationId: credit.id, userId: owner.userId, idempotencyKey: randomUUID(), name: 'train', kind: 'training', resourceClassId: 'h100', siteId: rc!.siteId,
      gpus: 4, nodes: 1, walltimeSeconds: 48 * H, image: 'img', command: 'run', env: {}, state: 'COMPLETED', reservedAmount: 10_000, reservedUnit: 'cents', centsPerGpuHour: 290,
      submittedAt: new Date('2026-03-10T09:00:00Z'), startedAt: new Date('2026-03-10T10:00:00Z'), endedAt: new Date('2026-03-10T11:00:00Z'), gpuSeconds: 4 * H, costCents: 1_160, chargedAmount: 1_160, energyWh: 1000, settledAt: new Date('2026-03-10T11:00:02Z'),
    });
    await setLocale(coOwner.userId, 'de');
    const invoice = await issueInvoice(db, { orgId: owner.orgId, month: '2026-03', now: new Date('2026-04-02T09:00:00Z'), vatPermille: 190 });
    expect(invoice?.created).toBe(true);
    expect(await outbox(manager.userId, 'invoice_issued')).toHaveLength(0);
    expect((await outbox(owner.userId, 'invoice_issued')).map((r) => r.attachments)).toEqual([[{ kind: 'invoice-pdf', invoiceId: invoice!.id, locale: 'en' }]]);
    await deliver();
    const [mail] = received(owner.email).filter((m) => m.subject.startsWith(`Invoice ${invoice!.number}`));
    expect(mail!.subject).toBe(`Invoice ${invoice!.number} for 2026-03`);
    expect(mail!.text).toContain('The invoice is attached as a PDF');
    expect(mail!.attachments).toHaveLength(1);
    expect(mail!.attachments[0]).toMatchObject({ filename: `${invoice!.number}.pdf`, contentType: 'application/pdf' });
    expect(mail!.attachments[0]!.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const [german] = received(coOwner.email).filter((m) => m.subject.startsWith(`Rechnung ${invoice!.number}`));
    expect(german!.subject).toBe(`Rechnung ${invoice!.number} für 2026-03`);
    expect(german!.attachments[0]!.content.length).toBeGreaterThan(1000);

    await asAdmin.staff.changeTenantStatus({ orgId: owner.orgId, action: 'suspend', reason: 'Unpaid invoices' });
    const suspended = await db.select().from(mailOutbox).where(and(eq(mailOutbox.kind, 'tenant_status'), inArray(mailOutbox.toUserId, [owner.userId, coOwner.userId])));
    expect(suspended.filter((r) => r.subject.includes('suspended') || r.subject.includes('gesperrt')).map((r) => r.toAddress).sort()).toEqual([owner.email, coOwner.email].sort());
    await deliver();
    const [suspendedMail] = received(owner.email).filter((m) => m.subject === `${owner.orgName} was suspended`);
    expect(suspendedMail!.text).toContain(`${owner.orgName} was suspended by the centre: Unpaid invoices`);
  });

  it('tells a company’s owners once a month that its cap is reached, from the tenant’s own transaction', async () => {
    const owner = await createTenant(db, { kind: 'company', name: `Capped Models ${randomUUID().slice(0, 6)}` });
    const asAdmin = callerFor(db, { userId: admin.userId });
    await asAdmin.staff.changeTenantStatus({ orgId: owner.orgId, action: 'verify', reason: 'Company checked' });
    const project = await callerFor(db, { userId: owner.userId, orgId: owner.orgId }).project.create({ title: 'Capped models', abstract: 'Training models within a cap.', workloadKind: 'training', members: [] });
    const credit = await asAdmin.staff.grantCreditLine({ projectId: project.id, amountEuros: 10_000, periodStart: '2025-01-01', periodEnd: '2028-12-31', reason: 'Credit line for tests' });
    await callerFor(db, { userId: owner.userId, orgId: owner.orgId }).allocation.setMonthlyCap({ capEuros: 100, reason: 'Keep it small' });
    // As a submission reserves: in the tenant's own transaction (portal_tenant, row-level security).
    const reserve = (amountCents: number) =>
      db.transaction(async (tx) => {
        await actAsTenant(tx, owner.orgId, 'write');
        await reserveBudget(tx, { allocationId: credit.id, orgId: owner.orgId, jobId: randomUUID(), amount: amountCents, actorUserId: owner.userId, today: TODAY, at: new Date(`${TODAY}T12:00:00Z`) });
      });
    await reserve(4_000); // 60 € left: another 40 € fits
    expect(await notices(owner.userId, 'notice.monthlyCapReached')).toHaveLength(0);
    await reserve(4_000); // 20 € left: the next 40 € would not fit
    await reserve(1_000);
    expect(await notices(owner.userId, 'notice.monthlyCapReached')).toHaveLength(1);
    const rows = await outbox(owner.userId, 'monthly_cap_reached');
    expect(rows.map((r) => [r.orgId, r.dedupeKey, r.subject])).toEqual([[owner.orgId, `monthly-cap:${owner.orgId}:2026-12:${owner.userId}`, `${owner.orgName} has reached its monthly cap`]]);
  });

  it('lets a tenant’s transaction read the mail choices of its own members and of staff only, and change none', async () => {
    const a = await createTenant(db);
    const b = await createTenant(db);
    for (const who of [a, b, admin]) await callerFor(db, { userId: who.userId }).notification.setPreferences({ choices: [{ kind: 'job_finished', email: true }] });
    const seen = await db.transaction(async (tx) => {
      await actAsTenant(tx, a.orgId, 'read');
      return tx.select({ userId: notificationPreferences.userId }).from(notificationPreferences).where(inArray(notificationPreferences.userId, [a.userId, b.userId, admin.userId]));
    });
    expect(seen.map((r) => r.userId).sort()).toEqual([a.userId, admin.userId].sort());
    await expect(
      db.transaction(async (tx) => {
        await actAsTenant(tx, a.orgId, 'write');
        await tx.insert(notificationPreferences).values({ userId: a.userId, kind: 'tenant_status', email: false });
      }),
    ).rejects.toThrow();
  });
});
