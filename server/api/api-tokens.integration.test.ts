// Personal API tokens through the whole call path (issue #13): made on the profile (account router),
// authenticated (server/services/identity/api-tokens.ts), then used by tRPC callers whose context carries the
// token — the tenant comes from the token, the scopes gate every procedure, and changes are audited
// under the token's name. The REST layer's own tests (rest.integration.test.ts) drive the same over HTTP.
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { apiTokens, auditEvents } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import type { ApiTokenAuth } from '~/server/core/rest/scopes';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { AppError } from '~/server/errors';
import { authenticateToken, createApiToken } from '~/server/services/identity/api-tokens';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { inRequestScope } from '~/server/request-scope';

const TODAY = '2026-12-01';
const NOW = new Date(`${TODAY}T10:00:00Z`);

async function refusal(promise: Promise<unknown>): Promise<{ code: string; key?: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return { code: error.code, key: error.key };
    if (error instanceof TRPCError) return { code: error.code, key: error.cause instanceof AppError ? error.cause.key : undefined };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe.each(dbTargets())('personal API tokens on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let scheduler: SchedulerPort;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let allocA: Awaited<ReturnType<typeof activeAllocation>>;
  let allocB: Awaited<ReturnType<typeof activeAllocation>>;
  let now = NOW;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 60, now: () => now, clusterId: `tokens-${randomUUID().slice(0, 8)}` });
    admin = await createStaff(db, 'admin');
    a = await createTenant(db);
    b = await createTenant(db);
    allocA = await activeAllocation(db, a, admin, { gpuHours: 500, today: TODAY, scheduler });
    allocB = await activeAllocation(db, b, admin, { gpuHours: 500, today: TODAY, scheduler });
  });
  afterAll(async () => handle?.close());

  const asPerson = (who: { userId: string; orgId?: string }) => callerFor(db, { userId: who.userId, orgId: who.orgId, now: () => now, scheduler });
  const withToken = (token: ApiTokenAuth) => callerFor(db, { token, now: () => now, scheduler });
  const auth = (token: string, address = '192.0.2.7') => authenticateToken(db, `Bearer ${token}`, { now, address });
  const jobInput = (allocationId: string) => ({
    allocationId,
    resourceClassId: 'h100',
    gpus: 1,
    nodes: 1,
    walltimeMinutes: 60,
    name: 'token job',
    kind: 'batch' as const,
    image: 'nvcr.io/nvidia/pytorch:24.05-py3',
    command: 'python train.py',
    env: {},
    idempotencyKey: randomUUID(),
  });

  it('makes a token once, stores only its hash and prefix, and lists it with its tenant', async () => {
    const made = await asPerson(a).account.createApiToken({ name: 'CI pipeline', orgId: a.orgId, scopes: ['read', 'jobs:write'], expiresInDays: 30 });
    expect(made.token).toMatch(/^afp_[0-9A-Za-z]{36}$/);
    const [row] = await db.select().from(apiTokens).where(eq(apiTokens.id, made.view.id));
    expect(JSON.stringify(row)).not.toContain(made.token);
    expect(row!.prefix).toBe(made.token.slice(0, 10));
    expect(row!.expiresAt.getTime() - now.getTime()).toBe(30 * 86_400_000);
    const listed = await asPerson(a).account.apiTokens();
    expect(listed.find((t) => t.id === made.view.id)).toMatchObject({ name: 'CI pipeline', orgName: a.orgName, scopes: ['read', 'jobs:write'], state: 'active', lastUsedAt: null });
    // Nobody else sees it.
    expect((await asPerson(b).account.apiTokens()).map((t) => t.id)).not.toContain(made.view.id);
    const [audit] = await db.select().from(auditEvents).where(and(eq(auditEvents.action, 'api_token.created'), eq(auditEvents.targetId, made.view.id)));
    expect(audit?.data).toMatchObject({ name: 'CI pipeline', scopes: ['read', 'jobs:write'] });
    expect(JSON.stringify(audit)).not.toContain(made.token);
  });

  it('authenticates a token, records where it was last used, and refuses look-alikes, expired and revoked ones with 401', async () => {
    const made = await asPerson(a).account.createApiToken({ name: 'notebook', orgId: a.orgId, scopes: ['read'], expiresInDays: 1 });
    const ok = await auth(made.token);
    expect(ok).toEqual({ id: made.view.id, name: 'notebook', userId: a.userId, orgId: a.orgId, scopes: ['read'], projectId: null });
    const [used] = await asPerson(a).account.apiTokens().then((list) => list.filter((t) => t.id === made.view.id));
    expect(used).toMatchObject({ lastUsedAt: now, lastUsedFrom: '192.0.2.7' });

    expect(await refusal(authenticateToken(db, null, { now }))).toEqual({ code: 'UNAUTHORIZED', key: 'apiToken.missing' });
    expect(await refusal(authenticateToken(db, `Basic ${made.token}`, { now }))).toEqual({ code: 'UNAUTHORIZED', key: 'apiToken.missing' });
    // One character changed: the checksum fails before any lookup.
    const altered = made.token.slice(0, 8) + (made.token[8] === 'a' ? 'b' : 'a') + made.token.slice(9);
    expect(await refusal(auth(altered))).toEqual({ code: 'UNAUTHORIZED', key: 'apiToken.invalid' });
    // Well-formed but unknown.
    const other = (await createApiToken(db, (await import('~/server/services/identity/accounts').then((m) => m.loadActor(db, b.userId)))!, { name: 'b', orgId: b.orgId, scopes: ['read'], expiresInDays: 1 }, now)).token;
    await db.delete(apiTokens).where(eq(apiTokens.name, 'b'));
    expect(await refusal(auth(other))).toEqual({ code: 'UNAUTHORIZED', key: 'apiToken.invalid' });

    // A day later, to the millisecond, it no longer works.
    now = new Date(NOW.getTime() + 86_400_000);
    try {
      expect(await refusal(auth(made.token))).toEqual({ code: 'UNAUTHORIZED', key: 'apiToken.expired' });
    } finally {
      now = NOW;
    }
    await asPerson(a).account.revokeApiToken({ tokenId: made.view.id });
    expect(await refusal(auth(made.token))).toEqual({ code: 'UNAUTHORIZED', key: 'apiToken.revoked' });
    expect((await asPerson(a).account.apiTokens()).find((t) => t.id === made.view.id)?.state).toBe('revoked');
    // Someone else's token cannot be revoked by them (it is as unknown as a missing one).
    const mine = await asPerson(a).account.createApiToken({ name: 'keep', orgId: a.orgId, scopes: ['read'], expiresInDays: 1 });
    expect(await refusal(asPerson(b).account.revokeApiToken({ tokenId: mine.view.id }))).toEqual({ code: 'NOT_FOUND', key: 'apiToken.notFound' });
    expect((await auth(mine.token)).id).toBe(mine.view.id);
  });

  it('refuses scopes a person may not hold, tenants they are not in, and lifetimes over a year', async () => {
    const me = asPerson(a);
    expect(await refusal(me.account.createApiToken({ name: 'x', orgId: b.orgId, scopes: ['read'], expiresInDays: 30 }))).toEqual({ code: 'BAD_REQUEST', key: 'apiToken.notMember' });
    expect(await refusal(me.account.createApiToken({ name: 'x', orgId: null, scopes: ['read'], expiresInDays: 30 }))).toEqual({ code: 'BAD_REQUEST', key: 'apiToken.orgNeeded' });
    expect(await refusal(me.account.createApiToken({ name: 'x', orgId: a.orgId, scopes: ['staff:read'], expiresInDays: 30 }))).toEqual({ code: 'BAD_REQUEST', key: 'apiToken.staffScopeNotStaff' });
    // A model-calling token names the project that pays: one of its tenant's the person submits to, and only with that scope.
    expect(await refusal(me.account.createApiToken({ name: 'x', orgId: a.orgId, scopes: ['inference'], expiresInDays: 30 }))).toEqual({ code: 'BAD_REQUEST', key: 'apiToken.projectNeeded' });
    expect(await refusal(me.account.createApiToken({ name: 'x', orgId: a.orgId, scopes: ['inference'], expiresInDays: 30, projectId: allocB.projectId }))).toEqual({ code: 'BAD_REQUEST', key: 'apiToken.projectNotYours' });
    expect(await refusal(me.account.createApiToken({ name: 'x', orgId: a.orgId, scopes: ['read'], expiresInDays: 30, projectId: allocA.projectId }))).toEqual({ code: 'BAD_REQUEST', key: 'apiToken.projectOnlyForInference' });
    const member = await addMember(db, a, 'member');
    expect(await refusal(asPerson(member).account.createApiToken({ name: 'x', orgId: a.orgId, scopes: ['inference'], expiresInDays: 30, projectId: allocA.projectId }))).toEqual({ code: 'BAD_REQUEST', key: 'apiToken.projectNotYours' });
    const calling = await me.account.createApiToken({ name: 'chatbot', orgId: a.orgId, scopes: ['inference'], expiresInDays: 30, projectId: allocA.projectId });
    expect((await auth(calling.token)).projectId).toBe(allocA.projectId);
    const tooLong = await refusal(me.account.createApiToken({ name: 'x', orgId: a.orgId, scopes: ['read'], expiresInDays: 366 }));
    expect(tooLong.code).toBe('BAD_REQUEST');
    // Staff may hold a staff-only token without a tenant.
    const staffToken = await asPerson(admin).account.createApiToken({ name: 'monitoring', orgId: null, scopes: ['staff:read'], expiresInDays: 365 });
    const staff = withToken(await auth(staffToken.token));
    expect((await staff.staff.tenants({})).length).toBeGreaterThanOrEqual(2);
    // … which is no tenant's and cannot act as staff.
    expect((await refusal(staff.job.list({}))).code).toBe('FORBIDDEN');
    expect(await refusal(staff.staff.changeTenantStatus({ orgId: b.orgId, action: 'suspend', reason: 'A token must not do this' }))).toEqual({ code: 'FORBIDDEN', key: 'apiToken.scopeMissing' });
  });

  it('acts for the token’s tenant only: lists and submits as from the browser, 404 for another tenant’s job, read tokens cannot submit', async () => {
    const writer = withToken(await auth((await asPerson(a).account.createApiToken({ name: 'submitter', orgId: a.orgId, scopes: ['read', 'jobs:write'], expiresInDays: 30 })).token));
    const reader = withToken(await auth((await asPerson(a).account.createApiToken({ name: 'reader', orgId: a.orgId, scopes: ['read'], expiresInDays: 30 })).token));
    const browser = asPerson(a);

    const estimateFields = { allocationId: allocA.allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60 };
    expect(await writer.job.estimate(estimateFields)).toEqual(await browser.job.estimate(estimateFields));

    const viaToken = await inRequestScope({ requestId: 'test-1', token: { id: 'scope-id', name: 'submitter' } }, () => writer.job.submit(jobInput(allocA.allocationId)));
    const viaBrowser = await browser.job.submit(jobInput(allocA.allocationId));
    const [tokenJob, browserJob] = await Promise.all([browser.job.get({ jobId: viaToken.id }), browser.job.get({ jobId: viaBrowser.id })]);
    expect(tokenJob.reservedAmount).toBe(browserJob.reservedAmount);
    expect(tokenJob.reservedUnit).toBe(browserJob.reservedUnit);
    expect(tokenJob.userId).toBe(a.userId);
    expect((await reader.job.list({})).map((j) => j.id)).toEqual(expect.arrayContaining([viaToken.id, viaBrowser.id]));

    expect(await refusal(reader.job.submit(jobInput(allocA.allocationId)))).toEqual({ code: 'FORBIDDEN', key: 'apiToken.scopeMissing' });
    expect(await refusal(reader.job.cancel({ jobId: viaToken.id }))).toEqual({ code: 'FORBIDDEN', key: 'apiToken.scopeMissing' });

    // Another tenant's job is not found, and B's allocation cannot be charged.
    const bJob = await asPerson(b).job.submit(jobInput(allocB.allocationId));
    expect((await refusal(writer.job.get({ jobId: bJob.id }))).code).toBe('NOT_FOUND');
    expect((await refusal(writer.job.cancel({ jobId: bJob.id }))).code).toBe('NOT_FOUND');
    expect((await refusal(writer.job.submit(jobInput(allocB.allocationId)))).code).toMatch(/NOT_FOUND|FORBIDDEN|BAD_REQUEST/);

    // The submission is audited under the token's name, inside its own transaction.
    const audits = await db.select().from(auditEvents).where(and(eq(auditEvents.action, 'api.call'), eq(auditEvents.targetId, 'job.submit'), eq(auditEvents.actorUserId, a.userId)));
    expect(audits.map((e) => e.data)).toContainEqual(expect.objectContaining({ apiToken: 'submitter' }));
    // A refused call left no audit row (it rolled back with the call).
    expect(audits).toHaveLength(1);
  });

  it('ignores the organisation cookie: a token of A acts for A even for a person who also belongs to B', async () => {
    const both = await addMember(db, a, 'member');
    const ownerB = asPerson(b);
    const invite = await ownerB.organisation.invite({ email: both.email, role: 'member' });
    await asPerson(both).invitation.accept({ token: invite.path.split('/').pop()! });
    const token = await auth((await asPerson(both).account.createApiToken({ name: 'two tenants', orgId: a.orgId, scopes: ['read'], expiresInDays: 30 })).token);
    const caller = callerFor(db, { token, orgId: b.orgId, now: () => now, scheduler });
    expect((await caller.organisation.current()).id).toBe(a.orgId);
    // Once the person leaves A, the token acts for nobody (not for B, the other tenant they are in).
    await asPerson(a).organisation.removeMember({ userId: both.userId });
    expect((await refusal(caller.organisation.current())).code).toBe('FORBIDDEN');
  });

  it('never lets a token manage the account: no new tokens, no password change', async () => {
    const token = await auth((await asPerson(a).account.createApiToken({ name: 'everything', orgId: a.orgId, scopes: ['read', 'jobs:write', 'applications:write'], expiresInDays: 30 })).token);
    const caller = withToken(token);
    expect(await refusal(caller.account.createApiToken({ name: 'child', orgId: a.orgId, scopes: ['read'], expiresInDays: 30 }))).toEqual({ code: 'FORBIDDEN', key: 'apiToken.notForTokens' });
    expect(await refusal(caller.account.changePassword({ currentPassword: 'x', newPassword: 'another-long-secret' }))).toEqual({ code: 'FORBIDDEN', key: 'apiToken.notForTokens' });
    expect(await refusal(caller.organisation.invite({ email: 'nobody-token@example.org', role: 'member' }))).toEqual({ code: 'FORBIDDEN', key: 'apiToken.notForTokens' });
    expect((await caller.account.me()).userId).toBe(a.userId);
  });
});
