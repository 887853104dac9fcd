// The declared authorisation policy of every procedure, and the records it is checked on: used by
// the authorisation matrix (server/api/authorization-matrix.integration.test.ts) and the fuzz test
// (server/api/fuzz.integration.test.ts).
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, applications, auditEvents, invitations, jobs, ledgerEntries, memberships, organisations, projectMembers, projects, sessions, users } from '~/db/schema';
import { appRouter } from '~/server/api/root';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, openTestDb, TEST_PASSWORD, type TargetName } from './harness';

export type Role = 'anonymous' | 'memberA' | 'managerA' | 'ownerA' | 'ownerB' | 'reviewer' | 'admin';
export const ROLES: Role[] = ['anonymous', 'memberA', 'managerA', 'ownerA', 'ownerB', 'reviewer', 'admin'];

/**
 * Who may call: `public` anyone; `signedIn` anyone signed in; `member` / `manager` / `owner` that role
 * or more in the caller's tenant — on records of tenant A when `recordsOfA` (then tenant B's owner is
 * refused), else on the caller's own tenant (B's owner is served B's data); `staff` any staff role;
 * `admin` the admin role.
 */
export type Access = 'public' | 'signedIn' | 'member' | 'manager' | 'owner' | 'staff' | 'admin';

export interface Fixture {
  orgA: string;
  projectA: string;
  allocationA: string;
  jobA: string;
  applicationA: string;
  invitationA: string;
  invitationTokenA: string;
  memberA: string;
  ownerBEmail: string;
  today: string;
  month: string;
}

export interface Entry {
  access: Access;
  recordsOfA?: boolean;
  input?: (f: Fixture) => unknown;
  /** Refused although the access level would allow them, with the rule that refuses them. */
  alsoRefused?: { roles: Role[]; why: string };
  /** What an allowed caller gets when the fixture has no such record (academic tenants have no invoices). */
  allowedAnswer?: 'NOT_FOUND';
}

const uuid0 = '00000000-0000-4000-8000-000000000000';
const period = (f: Fixture) => ({ month: f.month });

export const POLICY: Record<string, Entry> = {
  'account.signUp': { access: 'public', input: () => ({ name: 'Matrix', email: 'matrix-signup@example.org', password: TEST_PASSWORD, organisation: { name: 'Matrix Org', kind: 'academic', country: 'DE', residency: 'any' } }) },
  'account.me': { access: 'signedIn' },
  'account.myOrganisations': { access: 'signedIn' },
  'account.sessions': { access: 'signedIn' },
  'account.hasPassword': { access: 'signedIn' },
  'account.endSession': { access: 'signedIn', input: () => ({ sessionId: uuid0 }) },
  'account.endOtherSessions': { access: 'signedIn' },
  'account.identities': { access: 'signedIn' },
  'account.unlinkIdentity': { access: 'signedIn', input: () => ({ identityId: uuid0 }) },
  'account.changePassword': { access: 'signedIn', input: () => ({ currentPassword: TEST_PASSWORD, newPassword: 'another-long-secret' }) },
  'account.setTimeZone': { access: 'signedIn', input: () => ({ timeZone: 'Europe/Lisbon' }) },
  'account.requestPasswordReset': { access: 'public', input: () => ({ email: 'nobody-matrix@example.org' }) },
  'account.resetLinkUsable': { access: 'public', input: () => ({ token: 'A'.repeat(43) }) },
  'account.verificationLinkUsable': { access: 'public', input: () => ({ token: 'A'.repeat(43) }) },
  'account.resetPassword': { access: 'public', input: () => ({ token: 'A'.repeat(43), password: 'another-long-secret', passwordConfirm: 'another-long-secret' }) },
  'account.verifyEmail': { access: 'public', input: () => ({ token: 'A'.repeat(43) }) },
  'account.resendVerification': { access: 'signedIn' },
  'account.apiTokens': { access: 'signedIn' },
  'account.tokenProjects': { access: 'signedIn' },
  'account.createApiToken': { access: 'signedIn', input: () => ({ name: 'matrix', orgId: null, scopes: ['read'], expiresInDays: 30 }) },
  'account.revokeApiToken': { access: 'signedIn', input: () => ({ tokenId: uuid0 }) },

  'api.jobs': { access: 'member', input: () => ({}) },
  'api.allocations': { access: 'member' },
  'api.usage': { access: 'member', input: (f) => period(f), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },
  'api.invoices': { access: 'manager' },

  'allocation.overview': { access: 'member', recordsOfA: true, input: (f) => ({ allocationId: f.allocationA }) },
  'allocation.setMonthlyCap': { access: 'owner', input: () => ({ capEuros: 1000 }) },

  'application.get': { access: 'member', recordsOfA: true, input: (f) => ({ applicationId: f.applicationA }) },
  'application.create': { access: 'member', recordsOfA: true, input: (f) => applicationInput(f, { projectId: f.projectA }) },
  'application.update': { access: 'member', recordsOfA: true, input: (f) => applicationInput(f, { applicationId: f.applicationA }) },
  'application.submit': { access: 'member', recordsOfA: true, input: (f) => ({ applicationId: f.applicationA }) },

  'catalogue.resourceClasses': { access: 'member' },
  'catalogue.priceList': { access: 'member' },
  'catalogue.accessModes': { access: 'signedIn' },
  'models.shared': { access: 'signedIn' },
  'models.start': { access: 'admin', input: () => ({ modelId: 'no/such-model' }), allowedAnswer: 'NOT_FOUND' },
  'models.stop': { access: 'admin', input: () => ({ jobId: uuid0 }), allowedAnswer: 'NOT_FOUND' },

  'centre.dashboard': { access: 'staff', input: (f) => ({ from: f.today, to: f.today }) },
  'centre.partitions': { access: 'staff' },
  'centre.csv': { access: 'staff', input: (f) => ({ from: f.today, to: f.today }) },
  'centre.storage': { access: 'staff', input: (f) => ({ from: f.today, to: f.today }) },
  'centre.modelCalls': { access: 'staff', input: (f) => ({ from: f.today, to: f.today }) },
  'centre.decisionTimes': { access: 'staff', input: (f) => ({ from: f.today, to: f.today }) },
  'calls.list': { access: 'staff' },
  'calls.open': { access: 'admin', input: () => ({ accessModeId: 'large-scale', title: 'Large Scale, matrix call', gpuHoursPerRound: 100_000, cutoffs: ['2099-01-15T16:00:00Z'] }) },
  'allocationReports.file': { access: 'member', recordsOfA: true, input: (f) => ({ applicationId: f.applicationA, summary: 'A matrix report of what the allocation produced.', publications: ['10.1234/matrix'] }) },
  'allocationReports.overview': { access: 'staff' },
  'reviews.ofApplication': { access: 'staff', input: (f) => ({ applicationId: f.applicationA }) },
  'reviews.staff': { access: 'staff' },
  'reviews.assign': { access: 'admin', input: (f) => ({ applicationId: f.applicationA, reviewerUserId: uuid0 }) },
  'reviews.assignPanel': { access: 'admin', input: () => ({ roundId: uuid0, reviewerUserId: uuid0 }) },
  'reviews.submit': { access: 'staff', input: (f) => ({ applicationId: f.applicationA, scores: { excellence: 5, feasibility: 4, impact: 3 }, commentToApplicant: 'A matrix review.' }) },
  'reviews.decline': { access: 'staff', input: (f) => ({ applicationId: f.applicationA, reason: 'A matrix decline.' }) },
  'reviews.declareConflict': { access: 'staff', input: (f) => ({ applicationId: f.applicationA, reason: 'A matrix conflict.' }) },
  'reviews.overrideConflict': { access: 'admin', input: (f) => ({ applicationId: f.applicationA, reviewerUserId: uuid0, reason: 'A matrix override.' }) },
  'reviews.ranking': { access: 'staff', input: () => ({ roundId: uuid0 }), allowedAnswer: 'NOT_FOUND' },
  'reviews.decideBulk': { access: 'staff', input: (f) => ({ roundId: uuid0, applicationIds: [f.applicationA], outcome: 'rejected' }) },

  'invitation.preview': { access: 'public', input: (f) => ({ token: f.invitationTokenA }) },
  'invitation.accept': { access: 'signedIn', input: (f) => ({ token: f.invitationTokenA }) },

  'invoice.list': { access: 'manager' },
  'invoice.get': { access: 'manager', recordsOfA: true, input: () => ({ id: uuid0 }), allowedAnswer: 'NOT_FOUND' },
  'invoice.staffGet': { access: 'staff', input: () => ({ id: uuid0 }), allowedAnswer: 'NOT_FOUND' },
  'invoice.staffList': { access: 'staff' },
  'invoice.issue': { access: 'admin', input: (f) => ({ orgId: f.orgA, month: f.month }) },
  'invoice.issueMonthly': { access: 'admin' },
  'invoice.creditNote': { access: 'admin', input: () => ({ invoiceId: uuid0, netCents: 100, reason: 'Matrix check' }) },
  'invoice.recordPayment': { access: 'admin', input: () => ({ invoiceId: uuid0, paidOn: '2026-01-05', amountCents: 100, reference: 'Matrix check' }) },
  'invoice.reversePayment': { access: 'admin', input: () => ({ paymentId: uuid0, reason: 'Matrix check' }) },
  'invoice.openItems': { access: 'staff' },
  'invoice.openItemsCsv': { access: 'staff' },
  'invoice.liftOverdueBlock': { access: 'admin', input: (f) => ({ orgId: f.orgA, untilDay: '2099-12-31', reason: 'Matrix check' }) },

  'job.estimate': { access: 'member', recordsOfA: true, input: (f) => ({ allocationId: f.allocationA, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60 }) },
  'job.lowCarbonStart': { access: 'member', recordsOfA: true, input: (f) => ({ allocationId: f.allocationA, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60, windowHours: 12 }) },
  'job.fineTuneEstimate': { access: 'member', input: () => ({ resourceClassId: 'h100', paramsBillions: 7, tokensBillions: 1, gpus: 8 }) },
  'job.submit': { access: 'member', recordsOfA: true, input: (f) => ({ allocationId: f.allocationA, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60, name: 'matrix', kind: 'training', image: 'pytorch:2', command: 'python x.py', idempotencyKey: `matrix-${Math.random()}` }) },
  'job.cancel': { access: 'member', recordsOfA: true, input: (f) => ({ jobId: f.jobA }) },
  'job.list': { access: 'member' },
  'job.get': { access: 'member', recordsOfA: true, input: (f) => ({ jobId: f.jobA }) },
  'job.targets': { access: 'member' },

  'session.apps': { access: 'member' },
  'session.start': { access: 'member', recordsOfA: true, input: (f) => ({ allocationId: f.allocationA, resourceClassId: 'h100', app: 'jupyter', gpus: 1, walltimeMinutes: 60, idleTimeoutMinutes: 30, idempotencyKey: `matrix-${Math.random()}` }) },
  'session.list': { access: 'member' },
  'session.get': { access: 'member', recordsOfA: true, input: (f) => ({ jobId: f.jobA }), allowedAnswer: 'NOT_FOUND' },
  'session.end': { access: 'member', recordsOfA: true, input: (f) => ({ jobId: f.jobA }) },
  // Only one's own session is extended: job A is no session, so the roles allowed are answered NOT_FOUND too.
  'session.extend': { access: 'member', recordsOfA: true, input: (f) => ({ jobId: f.jobA, minutes: 30 }), allowedAnswer: 'NOT_FOUND' },

  'files.sites': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA }) },
  'files.list': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA, site: 'de-jena', path: '' }) },
  'files.stat': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA, site: 'de-jena', path: '' }) },
  'files.makeFolder': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA, site: 'de-jena', path: `matrix-${randomUUID()}` }) },
  'files.move': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA, site: 'de-jena', from: 'no-such-file', to: 'elsewhere' }), allowedAnswer: 'NOT_FOUND' },
  'files.remove': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA, site: 'de-jena', path: 'no-such-file' }), allowedAnswer: 'NOT_FOUND' },
  'files.startUpload': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA, site: 'de-jena', path: `upload-${randomUUID()}.bin`, size: 10 }) },
  'files.staffSites': { access: 'staff', input: (f) => ({ projectId: f.projectA }) },
  'files.staffList': { access: 'staff', input: (f) => ({ projectId: f.projectA, site: 'de-jena', path: '' }) },
  'files.staffStat': { access: 'staff', input: (f) => ({ projectId: f.projectA, site: 'de-jena', path: '' }) },
  'files.jobFolder': { access: 'member', recordsOfA: true, input: (f) => ({ jobId: f.jobA }) },
  'files.output': { access: 'member', recordsOfA: true, input: (f) => ({ jobId: f.jobA }) },

  'notification.list': { access: 'signedIn' },
  'notification.unreadCount': { access: 'signedIn' },
  'notification.markRead': { access: 'signedIn', input: () => ({ ids: [] }) },
  'notification.preferences': { access: 'signedIn' },
  'notification.setPreferences': { access: 'signedIn', input: () => ({ choices: [{ kind: 'job_finished', email: true }] }) },

  'organisation.current': { access: 'member' },
  'organisation.members': { access: 'member' },
  'organisation.invitations': { access: 'manager' },
  'organisation.billingProfile': { access: 'member' },
  'organisation.setBillingProfile': { access: 'manager', input: () => ({ legalName: 'Matrix GmbH', street: 'Hauptstraße 1', postcode: '07743', city: 'Jena', country: 'DE', vatId: 'DE136695976', billingEmail: 'billing@matrix.example' }) },
  'organisation.startPayAsYouGo': { access: 'owner' },
  'organisation.creditLines': { access: 'owner' },
  'organisation.requestCreditLine': { access: 'owner', recordsOfA: true, input: (f) => ({ allocationId: f.allocationA, amountEuros: 5000, reason: 'Matrix check' }) },
  'organisation.invite': { access: 'manager', input: () => ({ email: 'matrix-invitee@example.org', role: 'member' }) },
  'organisation.revokeInvitation': { access: 'manager', recordsOfA: true, input: (f) => ({ invitationId: f.invitationA }) },
  'organisation.changeRole': { access: 'manager', recordsOfA: true, input: (f) => ({ userId: f.memberA, role: 'manager' }) },
  'organisation.removeMember': { access: 'manager', recordsOfA: true, input: (f) => ({ userId: f.memberA }) },
  'organisation.spendLimits': { access: 'manager' },
  'organisation.setSpendLimit': { access: 'manager', recordsOfA: true, input: (f) => ({ userId: f.memberA, monthlyEuros: 10 }) },

  'project.list': { access: 'member' },
  'project.get': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA }) },
  'project.create': { access: 'member', input: () => ({ title: 'Matrix project', abstract: 'A project made by the matrix.', fieldOfScience: 'Physics' }) },
  'project.setMember': { access: 'manager', recordsOfA: true, input: (f) => ({ projectId: f.projectA, userId: f.memberA, role: 'manager' }) },
  'project.removeMember': { access: 'manager', recordsOfA: true, input: (f) => ({ projectId: f.projectA, userId: f.memberA }) },
  'project.budget': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA }) },
  'project.storage': { access: 'member', recordsOfA: true, input: (f) => ({ projectId: f.projectA }) },
  'project.setBudget': { access: 'manager', recordsOfA: true, input: (f) => ({ projectId: f.projectA, monthlyEuros: 50, totalEuros: null, costCentre: 'CC-1', purchaseOrder: null }) },

  'report.usage': { access: 'member', input: (f) => ({ period: period(f) }), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },
  'report.csv': { access: 'member', input: (f) => ({ period: period(f) }), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },
  'report.spending': { access: 'member' },
  'report.storage': { access: 'member', input: (f) => ({ period: period(f) }), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },
  'report.storageCsv': { access: 'member', input: (f) => ({ period: period(f) }), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },
  'report.modelCalls': { access: 'member', input: (f) => ({ period: period(f) }), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },
  'report.modelCallsCsv': { access: 'member', input: (f) => ({ period: period(f) }), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },
  'report.jobs': { access: 'member', input: (f) => ({ period: period(f) }), alsoRefused: { roles: ['memberA'], why: 'usage reports: owners, managers and the leads of a project only' } },

  'staff.tenants': { access: 'staff' },
  'staff.tenantCounts': { access: 'staff' },
  'staff.mailOutbox': { access: 'staff' },
  'staff.liftSignInLockout': { access: 'admin', input: (f) => ({ email: f.ownerBEmail, reason: 'Matrix check' }) },
  'staff.endSessions': { access: 'admin', input: (f) => ({ email: f.ownerBEmail, reason: 'Matrix check' }) },
  'staff.tenantSignIn': { access: 'staff', input: (f) => ({ orgId: f.orgA }) },
  'staff.setRequireSso': { access: 'admin', input: (f) => ({ orgId: f.orgA, requireSso: false, reason: 'Matrix check' }) },
  'staff.changeTenantStatus': { access: 'admin', input: (f) => ({ orgId: f.orgA, action: 'suspend', reason: 'Matrix check' }) },
  'staff.auditActors': { access: 'staff' },
  'staff.audit': { access: 'staff' },
  'staff.tco': { access: 'staff', input: () => ({ period: 'last30Days', whatIfPercent: 70 }) },
  'staff.cluster': { access: 'staff' },
  'whatIf.list': { access: 'staff' },
  'whatIf.machine': { access: 'staff' },
  'whatIf.get': { access: 'staff', input: () => ({ id: uuid0 }), allowedAnswer: 'NOT_FOUND' },
  'whatIf.create': { access: 'staff', input: () => ({ title: 'Matrix check', from: '2026-01-01', to: '2026-01-31', changes: [{ kind: 'policy', policy: 'fifo' }] }) },
  'staff.schedulerBudgets': { access: 'staff' },
  'staff.applicationQueue': { access: 'staff' },
  'staff.application': { access: 'staff', input: (f) => ({ applicationId: f.applicationA }) },
  'staff.creditRequestQueue': { access: 'staff' },
  'staff.decideCreditRequest': { access: 'admin', input: () => ({ requestId: uuid0, outcome: 'rejected', comment: 'Matrix check' }) },
  'staff.decide': { access: 'staff', input: (f) => ({ applicationId: f.applicationA, outcome: 'rejected', comment: 'Matrix check' }) },
  'staff.tenantUsage': { access: 'staff', input: (f) => ({ orgId: f.orgA, period: period(f) }) },
  'staff.companyProjects': { access: 'staff' },
  'staff.allocations': { access: 'staff' },
  'staff.allocation': { access: 'staff', input: (f) => ({ allocationId: f.allocationA }) },
  'staff.adjustAllocation': { access: 'admin', input: (f) => ({ allocationId: f.allocationA, amount: 10, reason: 'Matrix check' }) },
  'staff.refund': { access: 'admin', input: (f) => ({ allocationId: f.allocationA, amount: 1, reason: 'Matrix check' }) },
  'staff.setAllocationLimits': { access: 'admin', input: (f) => ({ allocationId: f.allocationA, maxGpusAtOnce: 8, maxWalltimeHours: 24, maxQueuedJobs: 10, reason: 'Matrix check' }) },
  'staff.grantCreditLine': { access: 'admin', input: (f) => ({ projectId: f.projectA, amountEuros: 10, periodStart: f.today, periodEnd: '2030-01-01', reason: 'Matrix check' }) },
  'staff.setMonthlyCap': { access: 'admin', input: (f) => ({ orgId: f.orgA, capEuros: 10, reason: 'Matrix check' }) },
};

export function applicationInput(f: Fixture, target: Record<string, string>) {
  const end = new Date(`${f.today}T00:00:00Z`);
  end.setUTCDate(end.getUTCDate() + 180);
  return { ...target, accessModeId: 'fast-lane', periodStart: f.today, periodEnd: end.toISOString().slice(0, 10), justification: 'Matrix check of who may apply for what.', lines: [{ resourceClassId: 'h100', gpuHours: 10 }] };
}

export function allowed(entry: Entry, role: Role): boolean {
  if (entry.alsoRefused?.roles.includes(role)) return false;
  const inTenant = (roles: Role[]) => roles.includes(role) || (!entry.recordsOfA && role === 'ownerB');
  switch (entry.access) {
    case 'public':
      return true;
    case 'signedIn':
      return role !== 'anonymous';
    case 'member':
      return inTenant(['memberA', 'managerA', 'ownerA']);
    case 'manager':
      return inTenant(['managerA', 'ownerA']);
    case 'owner':
      return inTenant(['ownerA']);
    case 'staff':
      return role === 'reviewer' || role === 'admin';
    case 'admin':
      return role === 'admin';
  }
}

export type Procedure = { _def: { type: 'query' | 'mutation' | 'subscription'; output?: unknown } };
export const procedures = (appRouter._def as unknown as { procedures: Record<string, Procedure> }).procedures;

/** Counts of the tables a call could change: a refused mutation must leave all of them as they were. */
export async function fingerprint(db: Db) {
  const tables = { allocations, applications, auditEvents, invitations, jobs, ledgerEntries, memberships, organisations, projectMembers, projects, sessions, users };
  const out: Record<string, number> = {};
  for (const [name, table] of Object.entries(tables)) out[name] = (await db.select({ n: count() }).from(table))[0]!.n;
  return out;
}

export const acceptingScheduler: SchedulerPort = {
  submit: (job) => Promise.resolve({ schedulerJobId: `m-${job.portalJobId.slice(0, 8)}` }),
  cancel: () => Promise.resolve(),
  extendTimeLimit: () => Promise.resolve(true),
  jobs: () => Promise.resolve([]),
  describeCluster: () => Promise.resolve({ at: new Date(), partitions: [], nodes: [], pendingJobs: 0, runningJobs: 0, powerW: 0 }),
};

/** buildFixture creates tenant A (owner, manager, member, a project with an allocation, a job, an application, an invitation), tenant B, a reviewer and an admin. */
export async function buildFixture(db: Db): Promise<{ fixture: Fixture; people: Record<Role, { userId: string | null; orgId?: string }> }> {
  const today = new Date().toISOString().slice(0, 10);
  const admin = await createStaff(db, 'admin');
  const reviewer = await createStaff(db, 'reviewer');
  const a = await createTenant(db, { name: 'Matrix Tenant A' });
  const managerA = await addMember(db, a, 'manager');
  const memberA = await addMember(db, a, 'member');
  const b = await createTenant(db, { name: 'Matrix Tenant B' });
  const alloc = await activeAllocation(db, a, admin, { gpuHours: 100, today });
  const asOwnerA = callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler: acceptingScheduler });
  await asOwnerA.project.setMember({ projectId: alloc.projectId, userId: memberA.userId, role: 'member' });
  await asOwnerA.project.setMember({ projectId: alloc.projectId, userId: managerA.userId, role: 'manager' });
  const job = await asOwnerA.job.submit({ allocationId: alloc.allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60, name: 'matrix job', kind: 'training', image: 'pytorch:2', command: 'python train.py', idempotencyKey: 'matrix-fixture-job' });
  const application = await asOwnerA.application.create(applicationInput({ today } as Fixture, { projectId: alloc.projectId }) as never);
  const invitation = await asOwnerA.organisation.invite({ email: 'matrix-invited@example.org', role: 'member' });
  const ownerBEmail = (await callerFor(db, { userId: b.userId }).account.me()).email;
  const fixture: Fixture = {
    orgA: a.orgId,
    projectA: alloc.projectId,
    allocationA: alloc.allocationId,
    jobA: job.id,
    applicationA: application.id,
    invitationA: invitation.id,
    invitationTokenA: invitation.path.split('/').pop()!,
    memberA: memberA.userId,
    ownerBEmail,
    today,
    month: today.slice(0, 7),
  };
  const people: Record<Role, { userId: string | null; orgId?: string }> = {
    anonymous: { userId: null },
    memberA: { userId: memberA.userId, orgId: a.orgId },
    managerA: { userId: managerA.userId, orgId: a.orgId },
    ownerA: { userId: a.userId, orgId: a.orgId },
    ownerB: { userId: b.userId, orgId: b.orgId },
    reviewer: { userId: reviewer.userId },
    admin: { userId: admin.userId },
  };
  return { fixture, people };
}

export type People = Record<Role, { userId: string | null; orgId?: string }>;

/** policyFixture opens a database with the fixture before the suite's tests and drops it after. */
export function policyFixture(target: TargetName): { handle: DbHandle; fixture: Fixture; people: People } {
  const state = {} as { handle: DbHandle; fixture: Fixture; people: People };
  beforeAll(async () => {
    state.handle = await openTestDb(target);
    Object.assign(state, await buildFixture(state.handle.db));
  });
  afterAll(async () => state.handle?.close());
  return state;
}

/**
 * callAs calls a procedure by its path as one kind of caller and says how it ended: 'answered', the
 * tRPC error code, or 'crashed: …' for anything else thrown. For a mutation, `before` holds the row
 * counts from just before the call (compare with fingerprint() after a refusal).
 */
export async function callAs(db: Db, people: People, role: Role, path: string, input: unknown): Promise<{ outcome: string; before?: Record<string, number> }> {
  const caller = callerFor(db, { ...people[role], scheduler: acceptingScheduler }) as unknown as Record<string, Record<string, (input: unknown) => Promise<unknown>>>;
  const [namespace, name] = path.split('.') as [string, string];
  const before = procedures[path]!._def.type === 'mutation' ? await fingerprint(db) : undefined;
  const outcome = await caller[namespace]![name]!(input).then(
    () => 'answered',
    (error: unknown) => (error instanceof TRPCError ? error.code : `crashed: ${String(error)}`),
  );
  return { outcome, before };
}
