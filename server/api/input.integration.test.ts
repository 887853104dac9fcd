// Bad input gets a clear message on the right field, the right code, and writes nothing.
import { TRPCError } from '@trpc/server';
import { count, eq, gt } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { auditEvents, jobs, organisations, users } from '~/db/schema';
import { accountOf, activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';

function fieldErrorsOf(error: unknown): { code: string; fields: Record<string, string> } {
  if (!(error instanceof TRPCError)) throw error;
  const shape = error as TRPCError & { cause?: unknown };
  // createCaller throws the raw TRPCError; format it the way the HTTP handler does.
  return { code: shape.code, fields: formatFields(shape) };
}

// The formatter's logic is what the browser receives; reuse it through the router's own formatter.
import { appRouter } from '~/server/api/root';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { createContextInner } from '~/server/api/trpc';

let currentDb: DbHandle['db'];
function formatFields(error: TRPCError, locale: 'en' | 'de' = 'en'): Record<string, string> {
  const shape = getErrorShape({
    config: appRouter._def._config,
    error,
    type: 'mutation',
    path: 'test',
    input: undefined,
    ctx: createContextInner({ db: currentDb, locale }),
  }) as { data: { fieldErrors?: Record<string, string> }; message: string };
  return shape.data.fieldErrors ?? { _: shape.message };
}

async function rejection(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return fieldErrorsOf(error);
  }
  throw new Error('expected the call to be refused');
}

const validOrg = { name: 'Valid Org', kind: 'company' as const, country: 'DE', residency: 'EU' as const };

describe.each(dbTargets())('input validation on %s', (target) => {
  let handle: DbHandle;
  let existing: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    currentDb = handle.db;
    existing = await createTenant(handle.db, { name: 'Existing Org' });
  });
  afterAll(async () => handle?.close());

  async function rowCounts() {
    const [[u], [o], [a]] = await Promise.all([
      handle.db.select({ n: count() }).from(users),
      handle.db.select({ n: count() }).from(organisations),
      handle.db.select({ n: count() }).from(auditEvents),
    ]);
    return { users: u!.n, orgs: o!.n, audit: a!.n };
  }

  it.each([
    ['malformed e-mail', { email: 'not-an-email' }, 'BAD_REQUEST', 'email', /valid e-mail/],
    ['short password', { password: 'short' }, 'BAD_REQUEST', 'password', /at least 10 characters/],
    ['oversized name', { name: 'x'.repeat(500) }, 'BAD_REQUEST', 'name', /at most 120 characters/],
    ['empty name', { name: '   ' }, 'BAD_REQUEST', 'name', /fill in/],
    ['oversized organisation name', { organisation: { ...validOrg, name: 'y'.repeat(121) } }, 'BAD_REQUEST', 'organisation.name', /at most 120/],
    ['unknown organisation kind', { organisation: { ...validOrg, kind: 'charity' } }, 'BAD_REQUEST', 'organisation.kind', /academic, company/],
    ['unknown country', { organisation: { ...validOrg, country: 'XX' } }, 'BAD_REQUEST', 'organisation.country', /country/],
    ['unknown residency', { organisation: { ...validOrg, residency: 'Mars' } }, 'BAD_REQUEST', 'organisation.residency', /any, EU, DE/],
    ['duplicate organisation name', { organisation: { ...validOrg, name: 'existing org' } }, 'CONFLICT', 'organisation.name', /already exists/],
  ])('sign-up with %s is refused on the right field and writes nothing', async (_label, override, code, field, message) => {
    const before = await rowCounts();
    const input = { name: 'Nina New', email: `new-${Math.random().toString(36).slice(2)}@example.org`, password: TEST_PASSWORD, organisation: validOrg, ...override };
    const result = await rejection(callerFor(handle.db).account.signUp(input as never));
    expect(result.code).toBe(code);
    expect(Object.keys(result.fields)).toContain(field);
    expect(result.fields[field]).toMatch(message);
    expect(await rowCounts()).toEqual(before);
  });

  it('refuses an unknown role and a malformed e-mail on invite, naming the field', async () => {
    const owner = callerFor(handle.db, { userId: existing.userId });
    const role = await rejection(owner.organisation.invite({ email: 'ok@example.org', role: 'emperor' as never }));
    expect(role.code).toBe('BAD_REQUEST');
    expect(role.fields.role).toMatch(/owner, manager, member/);
    const email = await rejection(owner.organisation.invite({ email: 'nope', role: 'member' }));
    expect(email.fields.email).toMatch(/valid e-mail/);
    expect(await owner.organisation.invitations()).toEqual([]);
  });

  it('refuses a NUL byte or another control character in any free-text field, naming the field, writing nothing', async () => {
    const staff = await createStaff(handle.db, 'admin');
    const alloc = await activeAllocation(handle.db, existing, staff, { gpuHours: 10, today: new Date().toISOString().slice(0, 10) });
    const owner = callerFor(handle.db, { userId: existing.userId });
    const job = { allocationId: alloc.allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 10, kind: 'training' as const, image: 'pytorch:2', command: 'python train.py', idempotencyKey: 'nul-test-0001' };
    const cases: [string, () => Promise<unknown>][] = [
      ['name', () => callerFor(handle.db).account.signUp({ name: 'Ni\u0000l', email: 'nul@example.org', password: TEST_PASSWORD, organisation: validOrg })],
      ['organisation.name', () => callerFor(handle.db).account.signUp({ name: 'Nil', email: 'nul@example.org', password: TEST_PASSWORD, organisation: { ...validOrg, name: 'Org\u0000' } })],
      ['title', () => owner.project.create({ title: 'Title \u0000', abstract: 'An abstract that is long enough.', fieldOfScience: 'Physics' })],
      ['abstract', () => owner.project.create({ title: 'Title', abstract: 'An abstract \u0000 that is long enough.', fieldOfScience: 'Physics' })],
      ['fieldOfScience', () => owner.project.create({ title: 'Title', abstract: 'An abstract that is long enough.', fieldOfScience: 'Phys\u202Eics' })],
      ['justification', () => owner.application.create({ projectId: alloc.projectId, accessModeId: 'fast-lane', periodStart: '2027-01-01', periodEnd: '2027-06-01', justification: 'We need this for the study \u0000 of things.', lines: [{ resourceClassId: 'h100', gpuHours: 5 }] })],
      ['name', () => owner.job.submit({ ...job, name: 'run\u0000' })],
      ['name', () => owner.job.submit({ ...job, name: 'line\nbreak' })],
      ['command', () => owner.job.submit({ ...job, name: 'ok', command: 'python\u0000 train.py' })],
      ['env.TOKEN', () => owner.job.submit({ ...job, name: 'ok', env: { TOKEN: 'a\u0000b' } })],
    ];
    for (const [field, call] of cases) {
      const before = await rowCounts();
      const result = await rejection(call());
      expect(result.code, field).toBe('BAD_REQUEST');
      expect(result.fields[field], JSON.stringify(result.fields)).toMatch(/control characters/);
      expect(await rowCounts()).toEqual(before);
    }
    // A multi-line script keeps its line breaks and tabs.
    const ok = await owner.job.submit({ ...job, name: 'Straße', command: 'set -e\n\tpython train.py', idempotencyKey: 'nul-test-0002' });
    const [stored] = await handle.db.select({ command: jobs.command }).from(jobs).where(eq(jobs.id, ok.id));
    expect(stored?.command).toBe('set -e\n\tpython train.py');
  });

  it('answers in German when the caller speaks German', async () => {
    try {
      await callerFor(handle.db, { locale: 'de' }).account.signUp({ name: 'A', email: 'kaputt', password: TEST_PASSWORD, organisation: validOrg });
      throw new Error('expected refusal');
    } catch (error) {
      expect(formatFields(error as TRPCError, 'de').email).toMatch(/gültige E-Mail-Adresse/);
    }
  });

  it('creates exactly one user and one organisation on a valid sign-up, company pending verification', async () => {
    const before = await rowCounts();
    expect(await callerFor(handle.db).account.signUp({ name: 'Carla Company', email: 'carla@firm.example', password: TEST_PASSWORD, organisation: { ...validOrg, name: 'Firm GmbH' } })).toEqual({ next: 'signIn' });
    expect(await rowCounts()).toEqual({ users: before.users + 1, orgs: before.orgs + 1, audit: before.audit + 1 });
    const result = await accountOf(handle.db, 'carla@firm.example');
    const org = await callerFor(handle.db, { userId: result.userId }).organisation.current();
    expect(org).toMatchObject({ name: 'Firm GmbH', status: 'pending_verification', myRole: 'owner', kind: 'company', residency: 'EU' });
  });

  it('answers a sign-up with a known e-mail like a new one, creates nothing and tells the account’s owner', async () => {
    const anonymous = callerFor(handle.db);
    const fresh = { name: 'Fresh', email: `fresh-${Math.random().toString(36).slice(2)}@example.org`, password: TEST_PASSWORD, organisation: { ...validOrg, name: 'Fresh Org' } };
    const newAnswer = await anonymous.account.signUp(fresh);
    const before = await rowCounts();
    // The owner's address in other letters, another password: the same answer, no account, no organisation.
    const knownAnswer = await anonymous.account.signUp({ ...fresh, email: fresh.email.toUpperCase(), password: 'somebody-else-entirely', organisation: { ...validOrg, name: 'Squatter Org' } });
    expect(knownAnswer).toEqual(newAnswer);
    expect(await rowCounts()).toEqual({ ...before, audit: before.audit + 1 });
    const owner = await accountOf(handle.db, fresh.email);
    const notices = await callerFor(handle.db, { userId: owner.userId }).notification.list();
    expect(notices.map((n) => n.text)).toEqual([expect.stringMatching(/tried to create an account with your e-mail address/)]);
    // A taken organisation name is refused on its field for a known address as for a new one.
    const taken = await rejection(anonymous.account.signUp({ ...fresh, password: 'somebody-else-entirely', organisation: { ...validOrg, name: 'existing org' } }));
    expect([taken.code, Object.keys(taken.fields)]).toEqual(['CONFLICT', ['organisation.name']]);
    // With the account's own password, the new organisation joins that account.
    expect(await anonymous.account.signUp({ ...fresh, name: 'Ignored', organisation: { ...validOrg, name: 'Second Org' } })).toEqual(newAnswer);
    const mine = await callerFor(handle.db, { userId: owner.userId }).account.myOrganisations();
    expect(mine.map((o) => o.name).sort()).toEqual(['Fresh Org', 'Second Org']);
    expect(await rowCounts()).toEqual({ users: before.users, orgs: before.orgs + 1, audit: before.audit + 2 });
  });

  it('checks a billing profile’s VAT ID on the field and stores it normalised; members read it, managers write it, other tenants see their own', async () => {
    const company = await createTenant(handle.db, { kind: 'company', name: 'Billing Test GmbH' });
    const owner = callerFor(handle.db, { userId: company.userId });
    const profile = { legalName: 'Billing Test GmbH', street: 'Leutragraben 1', postcode: '07743', city: 'Jena', country: 'DE', billingEmail: 'Invoices@Billing.example', purchaseOrder: 'PO-4711' };
    expect(await owner.organisation.billingProfile()).toBeNull();
    const wrongDigit = await rejection(owner.organisation.setBillingProfile({ ...profile, vatId: 'DE136695977' }));
    expect([wrongDigit.code, Object.keys(wrongDigit.fields)]).toEqual(['BAD_REQUEST', ['vatId']]);
    expect(wrongDigit.fields.vatId).toMatch(/check digit/);
    const otherState = await rejection(owner.organisation.setBillingProfile({ ...profile, vatId: 'ATU13585627' }));
    expect(otherState.fields.vatId).toMatch(/starts with DE, like DE123456788/);
    const nul = await rejection(owner.organisation.setBillingProfile({ ...profile, city: 'Je\u0000na', vatId: null }));
    expect(Object.keys(nul.fields)).toEqual(['city']);
    expect(await owner.organisation.billingProfile()).toBeNull();

    const saved = await owner.organisation.setBillingProfile({ ...profile, vatId: 'de 136.695.976' });
    expect(saved).toMatchObject({ vatId: 'DE136695976', billingEmail: 'invoices@billing.example', purchaseOrder: 'PO-4711', country: 'DE' });
    const audit = await handle.db.select().from(auditEvents).where(eq(auditEvents.orgId, company.orgId));
    expect(audit.map((a) => a.action)).toContain('billing.profile_created');

    // Outside the EU the number is kept as given; there is no EU rule to check it against.
    expect((await owner.organisation.setBillingProfile({ ...profile, country: 'CH', vatId: 'che-123.456.789 mwst' })).vatId).toBe('CHE-123.456.789 MWST');
    const changed = await handle.db.select().from(auditEvents).where(eq(auditEvents.action, 'billing.profile_changed'));
    expect(changed.at(-1)?.data).toMatchObject({ changed: ['country', 'vatId'] });

    const member = await addMember(handle.db, company, 'member');
    expect((await callerFor(handle.db, { userId: member.userId }).organisation.billingProfile())?.legalName).toBe('Billing Test GmbH');
    expect((await rejection(callerFor(handle.db, { userId: member.userId }).organisation.setBillingProfile(profile))).code).toBe('FORBIDDEN');
    // Another tenant sees none of it: its own profile is still empty.
    expect(await callerFor(handle.db, { userId: existing.userId }).organisation.billingProfile()).toBeNull();
  });

  it('keeps the audit log append-only in the database itself', async () => {
    const databaseMessage = (error: unknown) => String((error as { cause?: Error }).cause?.message ?? error);
    expect(databaseMessage(await handle.db.delete(auditEvents).where(gt(auditEvents.id, 0)).catch((e: unknown) => e))).toMatch(/append-only/);
    expect(databaseMessage(await handle.db.update(auditEvents).set({ reason: 'rewritten' }).where(gt(auditEvents.id, 0)).catch((e: unknown) => e))).toMatch(/append-only/);
  });
});
