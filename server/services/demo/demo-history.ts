// The demo centre's projects, applications and history: a PI with an expired and an active allocation
// used for months, an application waiting for review, a company with a credit line and months of jobs.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, invoices, memberships, organisations, staffRoles, users } from '~/db/schema';
import { monthOf, previousMonth } from '~/server/core/billing/invoicing';
import { addDays } from '~/server/core/working-days';
import type { TenantActor } from '~/server/services/actor';
import { loadActor, signUp } from '~/server/services/identity/accounts';
import { grantCreditLine, setAllocationLimits } from '~/server/services/ledger/allocations';
import { createApplication, decideApplication, submitApplication } from '~/server/services/ledger/applications';
import { closeDueRounds, openCall } from '~/server/services/ledger/calls';
import { assignRoundPanel, submitReview } from '~/server/services/ledger/reviews';
import { MAX_CUTOFFS } from '~/server/core/calls';
import { createProject } from '~/server/services/tenants/projects';
import { setBillingProfile } from '~/server/services/billing/billing';
import { issueMonthlyInvoices } from '~/server/services/billing/invoices';
import { expireDueAllocations } from '~/server/services/ledger/ledger';
import { recordPayment } from '~/server/services/billing/payments';
import { runDemoWorkload } from './demo-workload';
import { atDemoTime } from './demo-clock';
import type { JobKind } from '~/server/core/jobs/estimates';

async function tenantActor(db: Db, email: string): Promise<TenantActor> {
  const [row] = await db
    .select({ userId: users.id, orgId: organisations.id, orgName: organisations.name, kind: organisations.kind, status: organisations.status, role: memberships.role })
    .from(users)
    .innerJoin(memberships, eq(memberships.userId, users.id))
    .innerJoin(organisations, eq(organisations.id, memberships.orgId))
    .where(eq(users.email, email));
  const actor = await loadActor(db, row!.userId);
  return { ...actor!, org: { id: row!.orgId, name: row!.orgName, kind: row!.kind, status: row!.status }, role: row!.role };
}

/** at is an instant of a day, UTC. */
function at(day: string, hour: number, minute = 0): Date {
  return new Date(`${day}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00Z`);
}

/**
 * seedDemoHistory adds projects, allocations with weeks of usage, a waiting application and a company
 * credit line; each step dated when it would have happened (atDemoTime), none at the moment of seeding.
 */
export async function seedDemoHistory(db: Db, now: Date): Promise<void> {
  const today = now.toISOString().slice(0, 10);
  const pi = await tenantActor(db, 'pi@uni.example');
  const member = await tenantActor(db, 'member@uni.example');
  const owner = await tenantActor(db, 'owner@company.example');
  const staffActor = async (role: 'admin' | 'reviewer') => (await loadActor(db, (await db.select({ id: staffRoles.userId }).from(staffRoles).where(eq(staffRoles.role, role)))[0]!.id))!;
  const reviewer = await staffActor('reviewer');
  const admin = await staffActor('admin');

  // 1. The PI's project: an earlier Development allocation (now expired) and the current one, with
  //    their jobs run through the simulated cluster and settled through the ledger.
  const earlierStart = addDays(today, -140);
  const project = await atDemoTime(db, at(addDays(earlierStart, -3), 10), () => createProject(db, pi, {
    title: 'Protein structure prediction with diffusion models',
    abstract: 'We train and evaluate diffusion-based generative models that predict protein backbones from sequence, and compare them with AlphaFold-style baselines on CASP targets.',
    fieldOfScience: 'Life sciences',
    members: [{ userId: member.userId, role: 'member' }],
  }));
  const approve = async (start: string, gpuHours: number, grantHours: number, comment: string) => {
    const app = await atDemoTime(db, at(start, 8, 30), () => createApplication(
      db,
      pi,
      { projectId: project.id, accessModeId: 'development', kind: 'new', periodStart: start, periodEnd: addDays(start, 91), justification: 'Training runs of 8 to 32 GPUs for about 40 GPU-hours each; ablations and evaluation need roughly this budget over three months.', lines: [{ resourceClassId: 'h100', gpuSeconds: gpuHours * 3600 }] },
      start,
    ));
    await atDemoTime(db, at(start, 9), () => submitApplication(db, pi, app.id, at(start, 9)));
    const decided = await atDemoTime(db, at(addDays(start, 1), 14), () => decideApplication(db, reviewer, app.id, { outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuSeconds: grantHours * 3600 }], comment }, at(addDays(start, 1), 14)));
    return decided.allocationIds[0]!;
  };
  const earlier = await approve(earlierStart, 1000, 1000, '');
  const allocationId = await approve(addDays(today, -45), 2000, 1800, 'Approved with 1,800 GPU-h for the first phase; apply for a top-up with your ablation results.');
  await atDemoTime(db, at(addDays(today, -44), 10), () => setAllocationLimits(db, admin, {
    allocationId,
    maxGpusAtOnce: 192,
    maxWalltimeSeconds: 48 * 3600,
    maxQueuedJobs: 50,
    reason: 'Scaling study needs the whole H100 partition at times',
  }));
  const seconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;
  const piStream = { orgId: pi.org.id, orgKind: 'academic' as const, projectId: project.id, userIds: [pi.userId, member.userId], unit: 'gpu_seconds' as const, resourceClassId: 'h100', kinds: ['training', 'training', 'batch', 'fine_tuning'] as JobKind[], gpuChoices: [2, 4, 4, 8, 8, 16], walltimeHours: [2, 3, 4, 6] };

  // The member leads a small project of their own (a PI who is not an owner of the tenant sees only it in reports).
  const memberStart = addDays(today, -25);
  const memberProject = await atDemoTime(db, at(addDays(memberStart, -1), 16), () => createProject(db, member, {
    title: 'Graph neural networks for weather nowcasting',
    abstract: 'A pilot that trains small graph neural networks on radar composites to predict precipitation one hour ahead.',
    fieldOfScience: 'Earth and climate sciences',
    members: [],
  }));
  const trial = await atDemoTime(db, at(memberStart, 9, 40), () => createApplication(
    db,
    member,
    { projectId: memberProject.id, accessModeId: 'playground', kind: 'new', periodStart: memberStart, periodEnd: addDays(memberStart, 30), justification: 'A first try-out of GNN nowcasting on one year of radar data.', lines: [{ resourceClassId: 'h100', gpuSeconds: 100 * 3600 }] },
    memberStart,
  ));
  await atDemoTime(db, at(memberStart, 10), () => submitApplication(db, member, trial.id, at(memberStart, 10)));
  const memberAllocation = (await db.select({ id: allocations.id }).from(allocations).where(eq(allocations.applicationId, trial.id)))[0]!.id;

  // 2. A second project whose application waits in the staff queue, submitted three days ago.
  const submittedWaiting = new Date(now.getTime() - 3 * 86_400_000);
  const waiting = await atDemoTime(db, new Date(submittedWaiting.getTime() - 26 * 3_600_000), () => createProject(db, pi, {
    title: 'Low-resource machine translation for Alemannic dialects',
    abstract: 'Fine-tuning multilingual language models on small dialect corpora and measuring how much data and compute each dialect needs.',
    fieldOfScience: 'Linguistics',
    members: [],
  }));
  const pending = await atDemoTime(db, new Date(submittedWaiting.getTime() - 2 * 3_600_000), () => createApplication(
    db,
    pi,
    { projectId: waiting.id, accessModeId: 'development', kind: 'new', periodStart: addDays(today, 7), periodEnd: addDays(today, 91), justification: 'Twelve fine-tuning runs of a 7B model at about 60 GPU-hours each, plus evaluation: 800 GPU-hours on B200.', lines: [{ resourceClassId: 'b200', gpuSeconds: 800 * 3600 }] },
    today,
  ));
  await atDemoTime(db, submittedWaiting, () => submitApplication(db, pi, pending.id, submittedWaiting));

  // 3. The company's project with a credit line, a monthly cap and some spending this month.
  const company = await atDemoTime(db, at(addDays(today, -101), 15), () => createProject(db, owner, {
    title: 'Warehouse picking vision model',
    abstract: 'Fine-tuning an open vision-language model to recognise parcels and grasp points in our warehouse robots.',
    workloadKind: 'fine_tuning',
    dataResidency: 'DE',
    members: [],
  }));
  const credit = await atDemoTime(db, at(addDays(today, -100), 11), () => grantCreditLine(db, admin, { projectId: company.id, amountCents: 20_000_00, periodStart: addDays(today, -100), periodEnd: addDays(today, 265), reason: 'Framework contract 2026, prepaid credit' }));
  await db.update(organisations).set({ monthlyCapCents: 5_000_00 }).where(eq(organisations.id, owner.org.id));
  // Its billing profile, so its invoices carry the address and VAT ID an accounts department needs.
  const profiledAt = at(addDays(today, -101), 16);
  await atDemoTime(db, profiledAt, () => setBillingProfile(db, owner, { legalName: 'Example Robotics GmbH', street: 'Am Hafen 12', postcode: '28217', city: 'Bremen', country: 'DE', vatId: 'DE314159262', billingEmail: 'accounts@company.example', purchaseOrder: 'PO-2026-0042' }, profiledAt));

  // 4. Three busier research institutes keep the cluster's history from looking empty, one at each site.
  //    Lugano's 24 kW cap lets about 16 of its 32 GPUs run at full power, so two of the Swiss centre's
  //    16-GPU jobs wait for each other there: the cap binds at times, as it would.
  const background = [];
  // Large Scale takes requests in the rounds of a call (issue #32): the centre's call of the year, a cut-off
  // every 15 days from the week before these projects start; they apply in its first round.
  const institutesStart = addDays(today, -75);
  const firstCutoff = at(addDays(institutesStart, -7), 15);
  const call = await atDemoTime(db, at(addDays(institutesStart, -40), 10), () => openCall(db, admin, {
    accessModeId: 'large-scale',
    title: 'Large Scale access, rolling call',
    description: 'Projects above 50,000 GPU-hours. Applications are gathered at each cut-off and reviewed together; decisions within 10 working days.',
    gpuHoursPerRound: 200_000,
    cutoffs: Array.from({ length: MAX_CUTOFFS }, (_, i) => new Date(firstCutoff.getTime() + i * 15 * 86_400_000)),
  }, at(addDays(institutesStart, -40), 10)));
  // The admin and the reviewer sit on the first round's panel (issue #32): assigned its applications at the cut-off.
  for (const person of [admin, reviewer]) {
    await atDemoTime(db, at(addDays(institutesStart, -20), 11), () => assignRoundPanel(db, admin, { roundId: call.rounds[0]!.id, reviewerUserId: person.userId }, at(addDays(institutesStart, -20), 11)));
  }
  const institutes = [];
  for (const [name, country, residency, field, partition, gpuChoices] of [
    ['Institute for Climate Modelling', 'DE', 'EU', 'Earth and climate sciences', 'h100', [8, 16, 16, 32, 64]],
    ['Nordic Medical AI Lab', 'FI', 'EU', 'Medicine', 'b200', [8, 16, 16, 32, 64]],
    ['Alpine Language Technology Centre', 'CH', 'any', 'Linguistics', 'h100-ch', [4, 8, 8, 16]],
  ] as const) {
    const slug = name.toLowerCase().replace(/[^a-z]+/g, '-').replace(/^-|-$/g, '');
    const start = institutesStart;
    const created = await atDemoTime(db, at(addDays(start, -9), 11), () => signUp(db, { name: `PI of ${name}`, email: `pi@${slug}.example`, password: randomBytes(18).toString('base64url'), organisation: { name, kind: 'academic', country, residency } }, { verified: true }));
    const lead = await tenantActor(db, `pi@${slug}.example`);
    const bigProject = await atDemoTime(db, at(addDays(start, -8), 14), () => createProject(db, lead, { title: `${field}: foundation model training`, abstract: `Large-scale training runs at ${name}.`, fieldOfScience: field, members: [] }));
    const app = await atDemoTime(db, at(addDays(start, -8), 15), () => createApplication(
      db,
      lead,
      { projectId: bigProject.id, accessModeId: 'large-scale', kind: 'new', periodStart: start, periodEnd: addDays(start, 365), justification: 'Multi-node training campaigns over the year, planned in quarterly blocks.', lines: [{ resourceClassId: partition, gpuSeconds: 60_000 * 3600 }] },
      start,
    ));
    // Submitted a week before the period starts, on the morning of the round's cut-off.
    await atDemoTime(db, at(addDays(start, -7), 8), () => submitApplication(db, lead, app.id, at(addDays(start, -7), 8)));
    institutes.push({ created, app, partition, gpuChoices });
  }
  // The round closes at its cut-off (the worker's task); its three applications are decided the day before the projects start.
  const afterCutoff = new Date(firstCutoff.getTime() + 60_000);
  await atDemoTime(db, afterCutoff, () => closeDueRounds(db, afterCutoff));
  // Each panel member scores the three on the call's rubric before the decisions (the ranking page shows them).
  const panelScores = [
    [[5, 4, 5], [4, 4, 5], [3, 4, 4]],
    [[4, 5, 5], [4, 3, 4], [4, 4, 3]],
  ] as const;
  for (const [p, person] of [admin, reviewer].entries()) {
    for (const [i, { app }] of institutes.entries()) {
      const [excellence, feasibility, impact] = panelScores[p]![i]!;
      const scoredAt = at(addDays(institutesStart, -5 + p), 10 + i);
      await atDemoTime(db, scoredAt, () =>
        submitReview(db, person, app.id, { scores: { excellence, feasibility, impact }, commentToApplicant: i === 1 ? 'Sound plan; the data pipeline needs more detail before the second quarter.' : 'A strong case, clearly planned in quarterly blocks.', internalNote: '' }, scoredAt),
      );
    }
  }
  for (const { created, app, partition, gpuChoices } of institutes) {
    const start = institutesStart;
    const decided = await atDemoTime(db, at(addDays(start, -1), 16), () => decideApplication(db, admin, app.id, { outcome: 'approved', grantedLines: [{ resourceClassId: partition, gpuSeconds: 60_000 * 3600 }], comment: '' }, at(addDays(start, -1), 16)));
    await atDemoTime(db, at(addDays(start, -1), 16, 20), () => setAllocationLimits(db, admin, { allocationId: decided.allocationIds[0]!, maxGpusAtOnce: 256, maxWalltimeSeconds: 48 * 3600, maxQueuedJobs: 200, reason: 'Large-scale project' }));
    background.push({ orgId: created.orgId, orgKind: 'academic' as const, projectId: app.projectId, userIds: [created.userId], allocationId: decided.allocationIds[0]!, unit: 'gpu_seconds' as const, resourceClassId: partition, fromSeconds: seconds(start), toSeconds: Math.floor(now.getTime() / 1000) - 6 * 3600, jobsPerDay: 2.5, kinds: ['training', 'training', 'batch'] as JobKind[], gpuChoices: [...gpuChoices], walltimeHours: [4, 8, 12, 24], budgetCap: 55_000 * 3600 });
  }

  // 5. Run the history through the simulated cluster and settle it through the ledger.
  await runDemoWorkload(
    db,
    [
      ...background,
      { ...piStream, allocationId: earlier, fromSeconds: seconds(earlierStart), toSeconds: seconds(addDays(earlierStart, 91)), jobsPerDay: 2.2, budgetCap: 950 * 3600 },
      { ...piStream, allocationId, fromSeconds: seconds(addDays(today, -45)), toSeconds: Math.floor(now.getTime() / 1000) - 6 * 3600, jobsPerDay: 2, budgetCap: 700 * 3600 },
      { ...piStream, userIds: [member.userId], projectId: memberProject.id, allocationId: memberAllocation, fromSeconds: seconds(memberStart), toSeconds: Math.floor(now.getTime() / 1000) - 6 * 3600, jobsPerDay: 0.6, gpuChoices: [1, 2, 4], walltimeHours: [1, 2, 3], budgetCap: 60 * 3600 },
      { orgId: owner.org.id, orgKind: 'company', projectId: company.id, userIds: [owner.userId], allocationId: credit.id, unit: 'cents', resourceClassId: 'h100', fromSeconds: seconds(addDays(today, -100)), toSeconds: Math.floor(now.getTime() / 1000) - 6 * 3600, jobsPerDay: 1.6, kinds: ['fine_tuning', 'fine_tuning', 'inference', 'batch'], gpuChoices: [4, 8, 8], walltimeHours: [2, 4, 6], budgetCap: 14_000_00 },
    ],
    now,
  );
  // The earlier allocation expired at the end of its period, as the worker would have expired it.
  await atDemoTime(db, at(addDays(earlierStart, 91), 0, 5), () => expireDueAllocations(db, today));
  // 6. The company's monthly invoices, as the worker would have issued them early on each 1st, and
  // what it paid (issue #24): the older ones in full ten days after issue, the one issued last month
  // half, on the 20th — so it is overdue now (due the 15th of last month) and gets its payment
  // reminder on the worker's first daily round — and last month's own invoice not yet.
  const lastMonth = previousMonth(now);
  for (let month = monthOf(new Date(`${addDays(today, -100)}T00:00:00Z`)); month < lastMonth; month = nextMonthOf(month)) {
    const issued = at(`${nextMonthOf(month)}-01`, 0, 15);
    const run = await atDemoTime(db, issued, () => issueMonthlyInvoices(db, issued, { actorUserId: admin.userId }));
    const invoice = run.issued.find((i) => i.orgId === owner.org.id);
    if (!invoice) continue;
    const [row] = await db.select({ grossCents: invoices.grossCents }).from(invoices).where(eq(invoices.id, invoice.invoiceId));
    const partly = nextMonthOf(month) === lastMonth;
    const paidAt = at(`${nextMonthOf(month)}-${partly ? '20' : '10'}`, 9, 30);
    const amountCents = partly ? Math.floor(row!.grossCents / 2) : row!.grossCents;
    if (amountCents > 0) await atDemoTime(db, paidAt, () => recordPayment(db, admin, { invoiceId: invoice.invoiceId, paidOn: paidAt.toISOString().slice(0, 10), amountCents, reference: `SEPA ${invoice.number}`, now: paidAt }));
  }
  const firstOfMonth = at(`${today.slice(0, 7)}-01`, 0, 15);
  const issuedAt = firstOfMonth.getTime() < now.getTime() ? firstOfMonth : now;
  await atDemoTime(db, issuedAt, () => issueMonthlyInvoices(db, issuedAt, { actorUserId: admin.userId }));
}

/** nextMonthOf is the calendar month after a YYYY-MM month. */
function nextMonthOf(month: string): string {
  const [year, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${year + 1}-01` : `${year}-${String(m + 1).padStart(2, '0')}`;
}
