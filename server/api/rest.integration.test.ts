// The REST API (/api/v1) end to end through its request handler: a token of tenant A lists and submits
// jobs with the same estimate and reservation as the browser, sees nothing of tenant B, is refused when
// revoked, expired or without the scope, deduplicates by Idempotency-Key, is rate limited, and every
// refusal has the one error shape.
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, ledgerEntries } from '~/db/schema';
import { createRestHandler, type RestError } from '~/server/api/rest';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { acceptingScheduler } from '~/server/testing/authorization-policy';
import { apiTokens } from '~/server/testing/api-tokens';
import { balanceOfRow, ledgerSums } from '~/server/services/ledger/ledger';
import { addDays } from '~/server/core/working-days';

const today = new Date().toISOString().slice(0, 10);
const month = today.slice(0, 7);

describe.each(dbTargets())('REST API /api/v1 on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let a: { userId: string; orgId: string };
  let allocA: string;
  let jobA: string;
  let jobB: string;
  let tokens: ReturnType<typeof apiTokens>;
  let handler: (req: Request) => Promise<Response>;

  const jobInput = () => ({ allocationId: allocA, resourceClassId: 'h100', gpus: 2, nodes: 1, walltimeMinutes: 90 });
  const submitBody = (name: string) => ({ ...jobInput(), name, kind: 'training' as const, image: 'pytorch:2', command: 'python train.py' });

  function call(method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string>; via?: typeof handler } = {}) {
    const headers = new Headers(options.headers);
    if (options.token) headers.set('authorization', `Bearer ${options.token}`);
    if (options.body !== undefined) headers.set('content-type', 'application/json');
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    return (options.via ?? handler)(new Request(`http://portal.test/api/v1${path}`, { method, headers, body }));
  }

  async function refusal(response: Response): Promise<RestError['error']> {
    const body = (await response.json()) as RestError;
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error.requestId).toBe(response.headers.get('x-request-id'));
    expect(body.error.message.length).toBeGreaterThan(0);
    return body.error;
  }

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    const admin = await createStaff(db, 'admin');
    a = await createTenant(db);
    const b = await createTenant(db);
    allocA = (await activeAllocation(db, a, admin, { gpuHours: 1000, today })).allocationId;
    const allocB = (await activeAllocation(db, b, admin, { gpuHours: 100, today })).allocationId;
    const browserA = callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler: acceptingScheduler });
    jobA = (await browserA.job.submit({ ...submitBody('browser job'), idempotencyKey: 'browser-job-1' })).id;
    const browserB = callerFor(db, { userId: b.userId, orgId: b.orgId, scheduler: acceptingScheduler });
    jobB = (await browserB.job.submit({ allocationId: allocB, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60, name: 'b job', kind: 'training', image: 'pytorch:2', command: 'x', idempotencyKey: 'tenant-b-job-1' })).id;
    tokens = apiTokens(db);
    handler = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 1000, scheduler: acceptingScheduler });
  });
  afterAll(async () => handle?.close());

  it("lists tenant A's jobs page by page, in the browser's order, and none of B's", async () => {
    const token = await tokens.mint(a, ['read']);
    await callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler: acceptingScheduler }).job.submit({ ...submitBody('second'), idempotencyKey: 'browser-job-2' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await call('GET', `/jobs?limit=1${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect(response.status).toBe(200);
      const page = (await response.json()) as { items: { id: string; submittedAt: string }[]; nextCursor: string | null };
      expect(page.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.items.map((j) => j.id));
      expect(page.items.every((j) => !Number.isNaN(Date.parse(j.submittedAt)))).toBe(true);
      cursor = page.nextCursor;
    } while (cursor);
    const browser = await callerFor(db, { userId: a.userId, orgId: a.orgId }).job.list({});
    expect(seen).toEqual(browser.map((j) => j.id));
    expect(seen).toContain(jobA);
    expect(seen).not.toContain(jobB);

    const running = await call('GET', '/jobs?state=RUNNING', { token });
    expect(((await running.json()) as { items: unknown[] }).items).toEqual([]);
  });

  it('submits a job with the estimate and the ledger reservation of the browser', async () => {
    const token = await tokens.mint(a, ['read', 'jobs:write']);
    const browser = callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler: acceptingScheduler });
    const estimated = await call('POST', '/jobs/estimate', { token, body: jobInput() });
    expect(estimated.status).toBe(200);
    expect(await estimated.json()).toEqual(JSON.parse(JSON.stringify(await browser.job.estimate(jobInput()))));

    const submitted = await call('POST', '/jobs', { token, body: submitBody('from a script'), headers: { 'idempotency-key': 'script-run-1' } });
    expect(submitted.status).toBe(200);
    const created = (await submitted.json()) as { id: string; state: string };
    expect(created.state).toBe('PENDING');
    const twin = await browser.job.submit({ ...submitBody('from the browser'), idempotencyKey: 'browser-twin' });

    const reserve = async (jobId: string) => (await db.select({ amount: ledgerEntries.amount }).from(ledgerEntries).where(and(eq(ledgerEntries.jobId, jobId), eq(ledgerEntries.kind, 'reserve'))))[0]?.amount;
    const estimate = (await browser.job.estimate(jobInput())).reservation;
    expect(await reserve(created.id)).toBe(estimate);
    expect(await reserve(twin.id)).toBe(estimate);

    const got = await call('GET', `/jobs/${created.id}`, { token });
    expect(got.status).toBe(200);
    const job = (await got.json()) as { id: string; name: string; reservedAmount: number; submittedAt: string };
    expect(job).toMatchObject({ id: created.id, name: 'from a script', reservedAmount: estimate });
    expect(new Date(job.submittedAt).toISOString()).toBe(job.submittedAt);

    const cancelled = await call('POST', `/jobs/${created.id}/cancel`, { token });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({ id: created.id });
  });

  it('approves a Playground request at once through the API: the grant written on the portal’s own connection after the tenant’s commit', async () => {
    // Through the handler (not a bare tRPC caller), as a browser's and a script's requests go: the tenant's
    // transaction may not write the grant (drizzle/0064), so the approval follows its commit (issue #31).
    const lab = await createTenant(db);
    const project = await callerFor(db, { userId: lab.userId, orgId: lab.orgId }).project.create({ title: 'REST playground', abstract: 'A first look through the API.', fieldOfScience: 'Physics', members: [] });
    const token = await tokens.mint(lab, ['read', 'applications:write']);
    const created = await call('POST', '/applications', { token, body: { projectId: project.id, accessModeId: 'playground', periodStart: today, periodEnd: addDays(today, 20), justification: 'A first look at the partition with a small run.', lines: [{ resourceClassId: 'h100', gpuHours: 50 }] } });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const submitted = await call('POST', `/applications/${id}/submit`, { token });
    expect(submitted.status).toBe(200);
    expect(await submitted.json()).toEqual({ id, status: 'approved' });
    const [allocation] = await db.select({ id: allocations.id, granted: allocations.granted }).from(allocations).where(eq(allocations.applicationId, id));
    expect(allocation?.granted).toBe(50 * 3600);
    expect(await db.select({ kind: ledgerEntries.kind, amount: ledgerEntries.amount }).from(ledgerEntries).where(eq(ledgerEntries.allocationId, allocation!.id))).toEqual([{ kind: 'grant', amount: 50 * 3600 }]);
  });

  it('makes one job of the same Idempotency-Key sent twice', async () => {
    const token = await tokens.mint(a, ['jobs:write']);
    const headers = { 'idempotency-key': 'retry-after-timeout-42' };
    const first = (await (await call('POST', '/jobs', { token, body: submitBody('once'), headers })).json()) as { id: string };
    const again = await call('POST', '/jobs', { token, body: submitBody('once'), headers });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { id: string }).id).toBe(first.id);
    expect(await db.select({ id: jobs.id }).from(jobs).where(eq(jobs.name, 'once'))).toHaveLength(1);
  });

  it('refuses an Idempotency-Key sent again with another body: 422 idempotency_key_reused, naming the key, nothing made', async () => {
    const token = await tokens.mint(a, ['jobs:write']);
    const headers = { 'idempotency-key': 'nightly-run-2026-12-06' };
    const first = await call('POST', '/jobs', { token, body: submitBody('nightly'), headers });
    expect(first.status).toBe(200);
    const other = await call('POST', '/jobs', { token, body: { ...submitBody('nightly'), gpus: 4 }, headers });
    expect(other.status).toBe(422);
    const body = (await other.json()) as { error: { code: string; message: string; requestId: string } };
    expect(body.error.code).toBe('idempotency_key_reused');
    expect(body.error.message).toContain('nightly-run-2026-12-06');
    expect(body.error.requestId).toBeTruthy();
    expect(await db.select({ id: jobs.id }).from(jobs).where(eq(jobs.name, 'nightly'))).toHaveLength(1);
  });

  it('takes many submissions at once through the whole path: one job per key, every reservation in the ledger, nothing lost', async () => {
    const keys = Array.from({ length: 8 }, (_, i) => `concurrent-burst-key-${i}`);
    const tokensOfA = await Promise.all([tokens.mint(a, ['jobs:write']), tokens.mint(a, ['jobs:write'])]);
    // Each key sent twice at the same moment, by two different tokens of the same person.
    const answers = await Promise.all(
      keys.flatMap((key, i) => [0, 1].map((k) => call('POST', '/jobs', { token: tokensOfA[k]!, body: submitBody(`burst ${i}`), headers: { 'idempotency-key': key } }))),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    const ids = (await Promise.all(answers.map(async (r) => ((await r.json()) as { id: string }).id)));
    for (let i = 0; i < keys.length; i++) expect(ids[2 * i]).toBe(ids[2 * i + 1]);
    expect(new Set(ids).size).toBe(keys.length);
    const made = await db.select({ id: jobs.id, reserved: jobs.reservedAmount }).from(jobs).where(inArray(jobs.id, [...new Set(ids)]));
    expect(made).toHaveLength(keys.length);
    const [row] = await db.select().from(allocations).where(eq(allocations.id, allocA));
    expect(await ledgerSums(db, allocA)).toEqual(balanceOfRow(row!));
  });

  it("answers 404 for tenant B's job, as for one that does not exist", async () => {
    const token = await tokens.mint(a, ['read', 'jobs:write']);
    for (const [method, path] of [['GET', `/jobs/${jobB}`], ['POST', `/jobs/${jobB}/cancel`], ['GET', '/jobs/00000000-0000-4000-8000-000000000000']] as const) {
      const response = await call(method, path, { token });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await refusal(response)).code).toBe('NOT_FOUND');
    }
    const [b] = await db.select({ state: jobs.state, cancelRequestedAt: jobs.cancelRequestedAt }).from(jobs).where(eq(jobs.id, jobB));
    expect(b?.cancelRequestedAt).toBeNull();
  });

  it('refuses a revoked or expired token, a malformed one and a cookie without a token (401)', async () => {
    const revoked = await tokens.mint(a, ['read']);
    expect((await call('GET', '/jobs', { token: revoked })).status).toBe(200);
    await tokens.revoke(a, revoked);
    const expiring = await tokens.mint(a, ['read'], { expiresInDays: 1 });
    const twoDaysOn = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 1000, now: () => new Date(Date.now() + 2 * 86_400_000) });
    expect((await call('GET', '/jobs', { token: expiring })).status).toBe(200);
    for (const request of [
      { token: revoked },
      { token: expiring, via: twoDaysOn },
      { token: 'afp_not-a-token' },
      { headers: { cookie: `portal-org=${a.orgId}; next-auth.session-token=anything` } },
    ]) {
      const response = await call('GET', '/jobs', request);
      expect(response.status).toBe(401);
      expect((await refusal(response)).code).toBe('UNAUTHORIZED');
    }
  });

  it('refuses a submission with a read-only token (403) and writes nothing', async () => {
    const token = await tokens.mint(a, ['read']);
    const before = await db.select({ id: jobs.id }).from(jobs);
    const response = await call('POST', '/jobs', { token, body: submitBody('not allowed') });
    expect(response.status).toBe(403);
    const error = await refusal(response);
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toContain('jobs:write');
    expect(await db.select({ id: jobs.id }).from(jobs)).toHaveLength(before.length);
  });

  it('names the field at fault in the one error shape, in the caller’s language', async () => {
    const token = await tokens.mint(a, ['read', 'jobs:write']);
    const response = await call('POST', '/jobs', { token, body: { ...submitBody('bad'), gpus: 0 }, headers: { 'x-request-id': 'trace-123', 'accept-language': 'de' } });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    const error = await refusal(response);
    expect(error.code).toBe('BAD_REQUEST');
    expect(Object.keys(error.fields ?? {})).toEqual(['gpus']);
    expect(error.message).toContain('gpus');
    expect(error.fields?.gpus).toMatch(/mindestens|Mindest/i);

    const cursor = await call('GET', '/jobs?cursor=forged', { token });
    expect(cursor.status).toBe(400);
    expect(Object.keys((await refusal(cursor)).fields ?? {})).toEqual(['cursor']);

    const unknown = await call('GET', '/nothing-here', { token });
    expect(unknown.status).toBe(404);
    expect((await refusal(unknown)).message).toContain('/nothing-here');

    const notJson = await handler(new Request('http://portal.test/api/v1/jobs', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"gpus": ' }));
    expect(notJson.status).toBe(400);
    expect((await refusal(notJson)).code).toBe('BAD_REQUEST');

    const huge = await call('POST', '/jobs', { token, body: { ...submitBody('huge'), command: 'x'.repeat(1_100_000) } });
    expect(huge.status).toBe(413);
    expect((await refusal(huge)).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('counts requests per token with X-RateLimit headers and answers 429 with Retry-After beyond the limit', async () => {
    const limited = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 3, scheduler: acceptingScheduler });
    const token = await tokens.mint(a, ['read']);
    const other = await tokens.mint(a, ['read']);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await call('GET', '/allocations', { token, via: limited });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('3');
      expect(Number(response.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
      remaining.push(response.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await call('GET', '/allocations', { token, via: limited });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await refusal(refused)).code).toBe('TOO_MANY_REQUESTS');
    // Another token of the same person has its own count.
    expect((await call('GET', '/allocations', { token: other, via: limited })).status).toBe(200);
  });

  it('answers /usage.csv with the bytes of the usage page’s download and /allocations with balances', async () => {
    const token = await tokens.mint(a, ['read']);
    const response = await call('GET', `/usage.csv?month=${month}`, { token });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    const browser = await callerFor(db, { userId: a.userId, orgId: a.orgId }).report.csv({ period: { month } });
    expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(browser.csv))).toBe(true);

    const bad = await call('GET', '/usage.csv?month=2026-13', { token });
    expect(bad.status).toBe(400);
    expect(Object.keys((await refusal(bad)).fields ?? {})).toEqual(['period.month']);

    const allocations = (await (await call('GET', '/allocations', { token })).json()) as { items: { id: string; balance: { granted: number; reserved: number; available: number } }[] };
    const mine = allocations.items.find((x) => x.id === allocA);
    expect(mine?.balance.granted).toBe(1000 * 3600);
    expect(mine!.balance.reserved).toBeGreaterThan(0);
    expect(mine!.balance.available).toBe(mine!.balance.granted - mine!.balance.reserved);
  });
});
