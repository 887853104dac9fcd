// Project workspaces through the API, on PGlite and real Postgres: folders, moves and deletes; every way
// out of the workspace refused (traversal, encoded separators, a symlink a job planted pointing at /etc);
// another tenant told "not found"; a resumable upload cut halfway and resumed, its SHA-256 the original's;
// a download by ranges equal to the bytes; a simulated fine-tuning job writing its output as it runs.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { auditEvents, jobs } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { downloadResponse } from '~/server/api/files-http';
import { createContextInner } from '~/server/api/trpc';
import { uploadResponse } from '~/server/api/uploads-http';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { activeAllocation, callerFor, refusal, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { configuredSiteRoots } from './roots';
import { sweepUploads } from './uploads';
import { jobDirOf, workspaceOf } from './workspace';

const SITE = 'de-jena';


const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.each(dbTargets())('project workspaces on %s', (target) => {
  let handle: DbHandle;
  let db: Db;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  async function setup() {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const other = await createTenant(db);
    const { projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId });
    const stranger = callerFor(db, { userId: other.userId, orgId: other.orgId });
    const ctxOf = (who: { userId: string; orgId: string }) => createContextInner({ db, userId: who.userId, activeOrgId: who.orgId, locale: 'en' });
    const workspace = workspaceOf(configuredSiteRoots(), SITE, projectId);
    return { owner, other, projectId, allocationId, api, stranger, ctxOf, workspace };
  }

  it('makes, lists, moves and deletes; names the field and the rule of a refused path', async () => {
    const { projectId, api } = await setup();
    const at = { projectId, site: SITE };
    expect(await api.files.sites({ projectId })).toEqual(expect.arrayContaining([expect.objectContaining({ id: SITE })]));
    expect((await api.files.list({ ...at, path: '' })).entries).toEqual([]);
    await api.files.makeFolder({ ...at, path: 'data' });
    await api.files.makeFolder({ ...at, path: 'data/raw' });
    expect(await refusal(api.files.makeFolder({ ...at, path: 'data' }))).toMatchObject({ code: 'CONFLICT', field: 'path' });
    expect(await refusal(api.files.makeFolder({ ...at, path: 'missing/child' }))).toMatchObject({ code: 'NOT_FOUND', field: 'path' });
    const listing = await api.files.list({ ...at, path: 'data' });
    expect(listing.entries.map((e) => [e.name, e.type])).toEqual([['raw', 'folder']]);

    for (const [bad, rule] of [
      ['../outside', /\.\./],
      ['data/../../x', /\.\./],
      ['/etc/passwd', /relative/],
      ['..%2f..%2fetc', /encoded separator/],
      ['data%2F..', /encoded separator/],
      ['a\\..\\b', /backslash/],
      ['a\u0000b', /control character/],
      ['x'.repeat(300), /255 bytes/],
    ] as const) {
      const refused = await refusal(api.files.makeFolder({ ...at, path: bad }));
      expect(refused, bad).toMatchObject({ code: 'BAD_REQUEST', field: 'path' });
      expect(refused.message, bad).toMatch(rule);
      expect((await refusal(api.files.list({ ...at, path: bad }))).code, bad).toBe('BAD_REQUEST');
    }

    await api.files.move({ ...at, from: 'data/raw', to: 'raw-data' });
    expect(await refusal(api.files.move({ ...at, from: 'data', to: 'data/inside' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'to' });
    expect(await refusal(api.files.move({ ...at, from: 'raw-data', to: 'data' }))).toMatchObject({ code: 'CONFLICT', field: 'to' });
    expect((await api.files.list({ ...at, path: '' })).entries.map((e) => e.name)).toEqual(['data', 'raw-data']);
    await api.files.remove({ ...at, path: 'raw-data' });
    expect((await api.files.list({ ...at, path: '' })).entries.map((e) => e.name)).toEqual(['data']);
  });

  it('pages a folder of many files in name order, folders first', async () => {
    const { projectId, api, workspace } = await setup();
    await api.files.makeFolder({ projectId, site: SITE, path: 'many' });
    const dir = path.join(workspace.dir, 'many');
    await Promise.all(Array.from({ length: 450 }, (_, i) => writeFile(path.join(dir, `f${String(i).padStart(4, '0')}.txt`), `${i}\n`)));
    await mkdir(path.join(dir, 'zz-folder'));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof api.files.list>> = await api.files.list({ projectId, site: SITE, path: 'many', cursor, limit: 200 });
      seen.push(...page.entries.map((e) => e.name));
      expect(page.total).toBe(451);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen[0]).toBe('zz-folder');
    expect(seen.slice(1)).toEqual(Array.from({ length: 450 }, (_, i) => `f${String(i).padStart(4, '0')}.txt`));
  });

  it('never follows a symlink a job planted pointing at /etc, nor one on the way', async () => {
    const { projectId, api, ctxOf, owner, workspace } = await setup();
    await api.files.makeFolder({ projectId, site: SITE, path: 'out' });
    await symlink('/etc', path.join(workspace.dir, 'out', 'etc-link'));
    await symlink('/etc/passwd', path.join(workspace.dir, 'out', 'passwd-link'));
    const listing = await api.files.list({ projectId, site: SITE, path: 'out' });
    expect(listing.entries.map((e) => [e.name, e.type])).toEqual([
      ['etc-link', 'link'],
      ['passwd-link', 'link'],
    ]);
    const viaLink = await refusal(api.files.list({ projectId, site: SITE, path: 'out/etc-link' }));
    expect(viaLink.code).toBe('BAD_REQUEST');
    expect(viaLink.message).toMatch(/symbolic link/);
    expect((await refusal(api.files.list({ projectId, site: SITE, path: 'out/etc-link/ssl' }))).code).toBe('BAD_REQUEST');
    expect((await refusal(api.files.makeFolder({ projectId, site: SITE, path: 'out/etc-link/new' }))).code).toBe('BAD_REQUEST');
    const refuse = (status: number, _code: string, message: string) => new Response(message, { status });
    for (const p of ['out/passwd-link', 'out/etc-link/passwd', 'out/etc-link']) {
      const answer = await downloadResponse(ctxOf(owner), new Request('http://portal.test/x'), { projectId, site: SITE, path: p }, refuse);
      expect(answer.status, p).toBe(400);
      expect(await answer.text(), p).not.toMatch(/root:/);
    }
    // Deleting the link removes the link, not /etc.
    await api.files.remove({ projectId, site: SITE, path: 'out/etc-link' });
    expect((await readFile('/etc/hostname', 'utf8')).length).toBeGreaterThan(0);
  });

  it('another tenant is told "not found" for the workspace, its files, a job\'s folder and output', async () => {
    const { projectId, api, stranger, ctxOf, other, allocationId } = await setup();
    await api.files.makeFolder({ projectId, site: SITE, path: 'secret' });
    for (const call of [
      () => stranger.files.list({ projectId, site: SITE, path: '' }),
      () => stranger.files.stat({ projectId, site: SITE, path: 'secret' }),
      () => stranger.files.sites({ projectId }),
      () => stranger.files.makeFolder({ projectId, site: SITE, path: 'mine' }),
      () => stranger.files.remove({ projectId, site: SITE, path: 'secret' }),
      () => stranger.files.startUpload({ projectId, site: SITE, path: 'x.bin', size: 1 }),
    ]) {
      expect((await refusal(call())).code).toBe('NOT_FOUND');
    }
    const job = await api.job.submit({ allocationId, resourceClassId: 'h100', name: 'private', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'true', env: {}, idempotencyKey: randomUUID() });
    expect((await refusal(stranger.files.output({ jobId: job.id }))).code).toBe('NOT_FOUND');
    expect((await refusal(stranger.files.jobFolder({ jobId: job.id }))).code).toBe('NOT_FOUND');
    const refuse = (status: number, _code: string, message: string) => new Response(message, { status });
    const answer = await downloadResponse(ctxOf(other), new Request('http://portal.test/x'), { projectId, site: SITE, path: 'secret' }, refuse);
    expect(answer.status).toBe(404);
    // A site the residency rules out is no workspace either.
    expect((await refusal(api.files.list({ projectId, site: 'no-such-site', path: '' }))).code).toBe('NOT_FOUND');
  });

  it("reads a job's output in whole lines and whole characters, whatever the chunk", async () => {
    const { api, allocationId, workspace } = await setup();
    const job = await api.job.submit({ allocationId, resourceClassId: 'h100', name: 'log', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'true', env: {}, idempotencyKey: randomUUID() });
    const dir = jobDirOf(workspace, job.id);
    await mkdir(dir, { recursive: true });
    // "ä" is two bytes; the fifth line is still being written (no newline yet).
    await writeFile(path.join(dir, 'stdout.log'), 'line 1\nline 2 ä\nline 3\nline 4\npartial ä');
    const all = await api.files.output({ jobId: job.id });
    expect(all.text).toBe('line 1\nline 2 ä\nline 3\nline 4\n');
    expect(all.end).toBe(Buffer.byteLength(all.text));
    // Following from the end: nothing until the line is finished.
    const waiting = await api.files.output({ jobId: job.id, from: all.end });
    expect(waiting).toMatchObject({ text: '', start: all.end, end: all.end });
    // A chunk that ends inside "ä" stops before it; the next one starts with it.
    const first = await api.files.output({ jobId: job.id, from: 0, limit: 15 });
    expect(first.text).toBe('line 1\n');
    const cut = await api.files.output({ jobId: job.id, from: 7, limit: 8 }); // "line 2 " + the first byte of "ä"
    expect(cut.text).toBe('line 2 ');
    expect(cut.end).toBe(14);
    const rest = await api.files.output({ jobId: job.id, from: cut.end, limit: 8 });
    expect(rest.text).toBe('ä\n');
    // Older lines on demand: what precedes `before`, from a line's start.
    const older = await api.files.output({ jobId: job.id, before: all.end, limit: 14 });
    expect(older.text).toBe('line 3\nline 4\n');
    const oldest = await api.files.output({ jobId: job.id, before: older.start });
    expect(oldest.text + older.text).toBe(all.text);
  });

  it('staff read any workspace, each folder and download written to the audit log; tenants may not use the staff path', async () => {
    const { projectId, api, ctxOf, owner, workspace } = await setup();
    const staff = await createStaff(db, 'reviewer');
    await api.files.makeFolder({ projectId, site: SITE, path: 'results' });
    await writeFile(path.join(workspace.dir, 'results', 'scores.csv'), 'a,b\n1,2\n');
    const asStaff = callerFor(db, { userId: staff.userId });
    const listing = await asStaff.files.staffList({ projectId, site: SITE, path: 'results' });
    expect(listing.entries.map((e) => e.name)).toEqual(['scores.csv']);
    const refuse = (status: number, _code: string, message: string) => new Response(message, { status });
    const staffCtx = createContextInner({ db, userId: staff.userId, locale: 'en' });
    const answer = await downloadResponse(staffCtx, new Request('http://portal.test/x'), { projectId, site: SITE, path: 'results/scores.csv', asStaff: true }, refuse);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('a,b\n1,2\n');
    const rows = await db.select().from(auditEvents).where(and(eq(auditEvents.actorUserId, staff.userId), eq(auditEvents.targetId, projectId)));
    expect(rows.map((r) => [r.action, r.orgId, (r.data as { path?: string }).path]).sort()).toEqual([
      ['files.staff_downloaded', owner.orgId, 'results/scores.csv'],
      ['files.staff_listed', owner.orgId, 'results'],
    ]);
    // A path that breaks the rules is refused before any audit row is written.
    expect(await refusal(asStaff.files.staffStat({ projectId, site: SITE, path: 'a\u0000b' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'path' });
    expect(await refusal(asStaff.files.staffList({ projectId, site: SITE, path: '../..' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'path' });
    // The tenant's own people use their path; the staff path is refused to them.
    expect((await refusal(api.files.staffList({ projectId, site: SITE, path: '' }))).code).toBe('FORBIDDEN');
    const tenantAsStaff = await downloadResponse(ctxOf(owner), new Request('http://portal.test/x'), { projectId, site: SITE, path: 'results/scores.csv', asStaff: true }, refuse);
    expect(tenantAsStaff.status).toBe(403);
  });

  it('resumes an upload cut halfway; the SHA-256 is the original\'s, the download by ranges is the same bytes', async () => {
    const { projectId, ctxOf, owner, other, api } = await setup();
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const base = 'http://portal.test/api/v1/uploads';
    const tus = (method: string, url: string, headers: Record<string, string>, body?: Uint8Array, who = owner) =>
      uploadResponse(ctxOf(who), new Request(url, { method, headers: { 'tus-resumable': '1.0.0', ...headers }, ...(body ? { body, duplex: 'half' } : {}) } as RequestInit), '/api/v1/uploads');
    const meta = (fields: Record<string, string>) => Object.entries(fields).map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`).join(',');

    const created = await tus('POST', base, { 'upload-length': String(bytes.length), 'upload-metadata': meta({ projectId, site: SITE, path: 'datasets/train.bin' }) });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toMatch(/\/api\/v1\/uploads\/de-jena\.[0-9a-f-]{36}$/);
    // The first half arrives, then the connection is cut.
    const half = Math.floor(bytes.length / 2);
    const first = await tus('PATCH', location, { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, bytes.subarray(0, half));
    expect(first.status).toBe(204);
    // Someone else cannot see, continue or delete it.
    expect((await tus('HEAD', location, {}, undefined, other)).status).toBe(404);
    expect((await tus('PATCH', location, { 'upload-offset': String(half), 'content-type': 'application/offset+octet-stream' }, bytes.subarray(half), other)).status).toBe(404);
    // The client asks where it stands and sends the rest.
    const head = await tus('HEAD', location, {});
    expect(head.headers.get('upload-offset')).toBe(String(half));
    const rest = await tus('PATCH', location, { 'upload-offset': String(half), 'content-type': 'application/offset+octet-stream' }, bytes.subarray(half));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-sha256')).toBe(sha256(bytes));
    expect(decodeURIComponent(rest.headers.get('upload-path')!)).toBe('datasets/train.bin');
    expect((await api.files.stat({ projectId, site: SITE, path: 'datasets/train.bin' })).size).toBe(bytes.length);
    // The same name again is refused before a byte is sent.
    const again = await tus('POST', base, { 'upload-length': '5', 'upload-metadata': meta({ projectId, site: SITE, path: 'datasets/train.bin' }) });
    expect(again.status).toBe(409);
    expect(await again.text()).toMatch(/already there/);
    const outside = await tus('POST', base, { 'upload-length': '5', 'upload-metadata': meta({ projectId, site: SITE, path: '../escape.bin' }) });
    expect(outside.status).toBe(400);
    // An empty file lands at once, and asking after it again says it is complete.
    const empty = await tus('POST', base, { 'upload-length': '0', 'upload-metadata': meta({ projectId, site: SITE, path: 'datasets/empty.txt' }) });
    expect(empty.status).toBe(201);
    expect(empty.headers.get('upload-sha256')).toBe(sha256(new Uint8Array()));
    expect((await api.files.stat({ projectId, site: SITE, path: 'datasets/empty.txt' })).size).toBe(0);
    expect((await tus('HEAD', location, {})).headers.get('upload-offset')).toBe(String(bytes.length));
    // A week later the sweep clears the staging folder of both.
    const staging = path.join(configuredSiteRoots().rootOf(SITE), '.uploads');
    const id = location.split('/').pop()!;
    expect((await readdir(staging)).filter((f) => f.startsWith(id))).toEqual([`${id}.json`, `${id}.placed`]);
    const weekAgo = new Date(Date.now() - 8 * 86_400_000);
    for (const f of [`${id}.json`, `${id}.placed`]) await utimes(path.join(staging, f), weekAgo, weekAgo);
    expect(await sweepUploads(configuredSiteRoots(), [SITE], new Date())).toBeGreaterThanOrEqual(1);
    expect((await readdir(staging)).filter((f) => f.startsWith(id))).toEqual([]);

    // Downloaded in two ranges, the bytes are the upload's.
    const refuse = (status: number, _code: string, message: string) => new Response(message, { status });
    const get = (range?: string) => downloadResponse(ctxOf(owner), new Request('http://portal.test/x', range ? { headers: { range } } : {}), { projectId, site: SITE, path: 'datasets/train.bin' }, refuse);
    const full = await get();
    expect(full.status).toBe(200);
    expect(full.headers.get('content-disposition')).toMatch(/^attachment/);
    const a = await get(`bytes=0-${half - 1}`);
    const b = await get(`bytes=${half}-`);
    expect([a.status, b.status]).toEqual([206, 206]);
    const joined = Buffer.concat([Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())]);
    expect(sha256(joined)).toBe(sha256(bytes));
    expect(sha256(Buffer.from(await full.arrayBuffer()))).toBe(sha256(bytes));
  });

  it('a simulated fine-tuning job writes stdout as it runs; the output grows, follows from an offset, and its model downloads', { timeout: 120_000 }, async () => {
    const { projectId, allocationId, owner, ctxOf, workspace } = await setup();
    let now = new Date('2026-12-01T12:00:00Z');
    const scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 60, now: () => now, clusterId: `files-${randomUUID().slice(0, 8)}` });
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });
    const job = await api.job.submit({ allocationId, resourceClassId: 'h100', name: 'tune', kind: 'fine_tuning', gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'ghcr.io/acme/llama-3-8b:1.0', command: 'python tune.py', env: {}, idempotencyKey: randomUUID() });
    const step = async (seconds: number) => {
      now = new Date(now.getTime() + seconds * 1000);
      await reconcileOnce(db, scheduler, now);
    };
    await step(1);
    await step(5);
    const first = await api.files.output({ jobId: job.id });
    expect(first.exists).toBe(true);
    expect(first.text).toMatch(/pulling ghcr\.io\/acme\/llama-3-8b:1\.0/);
    await step(10);
    const more = await api.files.output({ jobId: job.id, from: first.end });
    expect(more.start).toBe(first.end);
    expect(more.text.length).toBeGreaterThan(0);
    expect(more.size).toBeGreaterThan(first.size);
    // The page's own figure: the job's last lines.
    expect((await api.job.get({ jobId: job.id })).output.length).toBeGreaterThan(3);
    for (let i = 0; i < 80; i++) {
      const row = (await db.select({ settledAt: jobs.settledAt }).from(jobs).where(eq(jobs.id, job.id)))[0]!;
      if (row.settledAt) break;
      await step(60);
    }
    const done = await api.files.output({ jobId: job.id });
    expect(done.done).toBe(true);
    expect(done.text).toMatch(/\[portal\] finished/);
    const folder = await api.files.jobFolder({ jobId: job.id });
    expect(folder.folder).toBe(`jobs/${job.id}`);
    expect(folder.listing.entries.map((e) => e.name)).toEqual(expect.arrayContaining(['model', 'metrics.jsonl', 'stdout.log', 'stderr.log']));
    const artefact = path.join(jobDirOf(workspace, job.id), 'model', 'adapter_model.safetensors');
    const refuse = (status: number, _code: string, message: string) => new Response(message, { status });
    const answer = await downloadResponse(ctxOf(owner), new Request('http://portal.test/x'), { projectId, site: SITE, path: `jobs/${job.id}/model/adapter_model.safetensors` }, refuse);
    expect(answer.status).toBe(200);
    expect(sha256(Buffer.from(await answer.arrayBuffer()))).toBe(sha256(await readFile(artefact)));
    // A planted link in place of the log is refused, not followed.
    const stderr = path.join(jobDirOf(workspace, job.id), 'stderr.log');
    await writeFile(`${stderr}.moved`, await readFile(stderr));
    await rm(stderr);
    await symlink('/etc/passwd', stderr);
    const linked = await refusal(api.files.output({ jobId: job.id, stream: 'stderr' }));
    expect(linked.code).toBe('BAD_REQUEST');
    expect(linked.message).toMatch(/symbolic link/);
  });
});
