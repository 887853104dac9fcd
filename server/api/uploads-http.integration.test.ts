// The PATCH of a resumable upload (tus 1.0, answered by server/api/uploads-http.ts itself): the offset must
// be where the upload stands (409), the type tus's (415), the body within the upload's length (413); a body
// cut short keeps its bytes and the upload resumes from there to the original's SHA-256; two PATCHes of one
// upload never write at once (the second asks the first to stop, then finds the offset moved); a length
// declared late is held to the project's storage; an upload past its expiry is gone (410).
import { createHash, randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations } from '~/db/schema';
import { createContextInner } from '~/server/api/trpc';
import { LOCK_DRAIN_MS, uploadResponse } from '~/server/api/uploads-http';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { BATCH_BYTES } from '~/server/services/files/upload-receive';
import { stagingDir } from '~/server/services/files/uploads';
import { activeAllocation, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

const SITE = 'de-jena';
const BASE = 'http://portal.test/api/v1/uploads';
const OCTETS = { 'content-type': 'application/offset+octet-stream' };
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const meta = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

/** A body that gives `bytes`, then either ends, fails (its sender gone) or waits until it is cancelled. */
function bodyOf(bytes: Uint8Array, then: 'end' | 'fail' | 'hang' = 'end'): { stream: ReadableStream<Uint8Array>; cancelled: Promise<void> } {
  let onCancel = () => {};
  const cancelled = new Promise<void>((resolve) => (onCancel = resolve));
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!sent) {
        sent = true;
        // In pieces, as a socket gives them.
        for (let at = 0; at < bytes.length; at += 65_536) controller.enqueue(bytes.slice(at, at + 65_536));
        return;
      }
      if (then === 'end') controller.close();
      else if (then === 'fail') controller.error(new Error('the connection was reset'));
      else return new Promise<void>(() => {}); // waits for more that never comes
    },
    cancel() {
      onCancel();
    },
  });
  return { stream, cancelled };
}

describe.each(dbTargets())('the PATCH of an upload on %s', (target) => {
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
    const { projectId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    const ctx = createContextInner({ db, userId: owner.userId, activeOrgId: owner.orgId, locale: 'en' });
    const tus = (method: string, url: string, headers: Record<string, string>, body?: Uint8Array | ReadableStream<Uint8Array>, signal?: AbortSignal) =>
      uploadResponse(ctx, new Request(url, { method, headers: { 'tus-resumable': '1.0.0', ...headers }, ...(body ? { body, duplex: 'half' } : {}), ...(signal ? { signal } : {}) } as RequestInit), '/api/v1/uploads');
    const create = async (headers: Record<string, string>, file = `in/${randomBytes(4).toString('hex')}.bin`) => {
      const created = await tus('POST', BASE, { 'upload-metadata': meta({ projectId, site: SITE, path: file }), ...headers });
      expect(created.status).toBe(201);
      return created.headers.get('location')!;
    };
    const offsetOf = async (url: string) => Number((await tus('HEAD', url, {})).headers.get('upload-offset'));
    return { projectId, tus, create, offsetOf };
  }

  /**
   * writing waits until a PATCH of the upload holds its lock and writes: its first batch of bytes is in the
   * staged file (taking the lock comes before, and a loaded machine may take more than a moment for it).
   */
  async function writing(url: string) {
    const staged = path.join(stagingDir(configuredSiteRoots(), SITE), url.split('/').pop()!);
    for (const deadline = Date.now() + 20_000; ; await new Promise((resolve) => setTimeout(resolve, 10))) {
      if (((await stat(staged).catch(() => null))?.size ?? 0) >= BATCH_BYTES) return;
      if (Date.now() > deadline) throw new Error(`no PATCH of ${url} wrote its first ${BATCH_BYTES} bytes within 20 s`);
    }
  }

  it('refuses an offset not where the upload stands (409), another type (415), no tus version (412), writing nothing', async () => {
    const { tus, create, offsetOf } = await setup();
    const bytes = randomBytes(200_000);
    const url = await create({ 'upload-length': String(bytes.length) });
    expect((await tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, bytes.subarray(0, 100_000))).status).toBe(204);
    const behind = await tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, bytes.subarray(0, 100_000));
    expect(behind.status).toBe(409);
    expect(behind.headers.get('tus-resumable')).toBe('1.0.0');
    expect((await tus('PATCH', url, { 'upload-offset': '150000', ...OCTETS }, bytes.subarray(150_000))).status).toBe(409);
    expect((await tus('PATCH', url, { 'upload-offset': '100000', 'content-type': 'application/octet-stream' }, bytes.subarray(100_000))).status).toBe(415);
    expect((await tus('PATCH', url, { 'upload-offset': '100000' }, bytes.subarray(100_000))).status).toBe(415);
    expect((await tus('PATCH', url, { 'upload-offset': '-1', ...OCTETS }, bytes.subarray(100_000))).status).toBe(400);
    const noVersion = await uploadResponse(
      createContextInner({ db, userId: null, locale: 'en' }),
      new Request(url, { method: 'PATCH', headers: { 'upload-offset': '100000', ...OCTETS }, body: bytes.subarray(100_000), duplex: 'half' } as RequestInit),
      '/api/v1/uploads',
    );
    expect(noVersion.status).toBe(412);
    expect(await offsetOf(url)).toBe(100_000);
    const rest = await tus('PATCH', url, { 'upload-offset': '100000', ...OCTETS }, bytes.subarray(100_000));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-sha256')).toBe(sha256(bytes));
  });

  it('takes the first bytes with the creation (creation-with-upload), the rest by PATCH', async () => {
    const { projectId, tus } = await setup();
    const bytes = randomBytes(300_000);
    const created = await tus('POST', BASE, { 'upload-length': String(bytes.length), 'upload-metadata': meta({ projectId, site: SITE, path: 'in/with-creation.bin' }), ...OCTETS }, bytes.subarray(0, 100_000));
    expect(created.status).toBe(201);
    expect(created.headers.get('upload-offset')).toBe('100000');
    const rest = await tus('PATCH', created.headers.get('location')!, { 'upload-offset': '100000', ...OCTETS }, bytes.subarray(100_000));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-sha256')).toBe(sha256(bytes));
  });

  it('refuses a body past the upload’s length (413): with a Content-Length before a byte is written, without one at the length', async () => {
    const { tus, create, offsetOf } = await setup();
    const bytes = randomBytes(100_000);
    const url = await create({ 'upload-length': String(bytes.length) });
    const declared = await tus('PATCH', url, { 'upload-offset': '0', 'content-length': String(bytes.length + 1), ...OCTETS }, Buffer.concat([bytes, Buffer.from('x')]));
    expect(declared.status).toBe(413);
    expect(await offsetOf(url)).toBe(0);
    // Sent without a length (chunked): nothing past the upload's length reaches the file.
    const tooLong = await tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, bodyOf(Buffer.concat([bytes, randomBytes(70_000)])).stream);
    expect(tooLong.status).toBe(413);
    expect(await offsetOf(url)).toBe(bytes.length);
    // Every byte is there: an empty PATCH at the end places it, with the SHA-256 of the upload's bytes.
    const done = await tus('PATCH', url, { 'upload-offset': String(bytes.length), ...OCTETS });
    expect(done.status).toBe(204);
    expect(done.headers.get('upload-sha256')).toBe(sha256(bytes));
    // Asked again, the answer is the same.
    const again = await tus('PATCH', url, { 'upload-offset': String(bytes.length), ...OCTETS });
    expect(again.status).toBe(204);
    expect(again.headers.get('upload-sha256')).toBe(sha256(bytes));
  });

  it('keeps what arrived of a PATCH cut mid-body; the upload resumes from there to the original’s SHA-256', async () => {
    const { tus, create, offsetOf } = await setup();
    const bytes = randomBytes(2 * 1024 * 1024 + 5);
    const url = await create({ 'upload-length': String(bytes.length) });
    const cut = 700_001;
    const first = await tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, bodyOf(bytes.subarray(0, cut), 'fail').stream);
    expect(first.status).toBe(400);
    expect(await offsetOf(url)).toBe(cut);
    const second = await tus('PATCH', url, { 'upload-offset': String(cut), ...OCTETS }, bodyOf(bytes.subarray(cut, cut * 2), 'fail').stream);
    expect(second.status).toBe(400);
    expect(await offsetOf(url)).toBe(cut * 2);
    const rest = await tus('PATCH', url, { 'upload-offset': String(cut * 2), ...OCTETS }, bytes.subarray(cut * 2));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-sha256')).toBe(sha256(bytes));
    expect(rest.headers.get('upload-offset')).toBe(String(bytes.length));
  });

  it('never lets two PATCHes of one upload write at once: the second asks the first to stop, which keeps its bytes', { timeout: 30_000 }, async () => {
    const { tus, create, offsetOf } = await setup();
    const bytes = randomBytes(1024 * 1024);
    const url = await create({ 'upload-length': String(bytes.length) });
    // The first PATCH's sender stalls after 300,000 bytes (a connection gone half-open).
    const stalled = bodyOf(bytes.subarray(0, 300_000), 'hang');
    const first = tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, stalled.stream);
    await writing(url);
    // The client comes back and sends from 0 again: it waits for the lock, the first stops after the drain time.
    const started = Date.now();
    const second = await tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, bytes);
    expect(Date.now() - started).toBeGreaterThanOrEqual(LOCK_DRAIN_MS - 50);
    await stalled.cancelled;
    const firstAnswer = await first;
    expect(firstAnswer.status).toBe(204);
    expect(firstAnswer.headers.get('upload-offset')).toBe('300000');
    // By then the upload stood at 300,000, not at 0: the second wrote nothing.
    expect(second.status).toBe(409);
    expect(await offsetOf(url)).toBe(300_000);
    const rest = await tus('PATCH', url, { 'upload-offset': '300000', ...OCTETS }, bytes.subarray(300_000));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-sha256')).toBe(sha256(bytes));
  });

  it('a PATCH whose sender leaves while it waits for the lock leaves the lock with its holder', { timeout: 30_000 }, async () => {
    const { tus, create, offsetOf } = await setup();
    const bytes = randomBytes(1024 * 1024);
    const url = await create({ 'upload-length': String(bytes.length) });
    const stalled = bodyOf(bytes.subarray(0, 300_000), 'hang');
    const first = tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, stalled.stream);
    await writing(url);
    // A second one waits for the lock (asking the first to stop), and its sender goes away.
    const leaving = new AbortController();
    const started = Date.now();
    const second = tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, bytes, leaving.signal);
    setTimeout(() => leaving.abort(), 100);
    expect((await second).status).toBeGreaterThanOrEqual(400);
    // A third still waits until the first has stopped and let go (nothing written beside it), then finds the offset moved.
    const third = await tus('PATCH', url, { 'upload-offset': '0', ...OCTETS }, bytes);
    expect(Date.now() - started).toBeGreaterThanOrEqual(LOCK_DRAIN_MS - 50);
    expect(third.status).toBe(409);
    expect((await first).headers.get('upload-offset')).toBe('300000');
    expect(await offsetOf(url)).toBe(300_000);
  });

  it('holds a length declared late to the project’s storage and declares it once; an expired upload is gone', async () => {
    const { projectId, tus, create, offsetOf } = await setup();
    // The project may store 1 GB at the site.
    await db.update(allocations).set({ storageGb: 1 }).where(eq(allocations.projectId, projectId));
    const deferred = await create({ 'upload-defer-length': '1' });
    const huge = await tus('PATCH', deferred, { 'upload-offset': '0', 'upload-length': String(2_000_000_000), ...OCTETS });
    expect(huge.status).toBe(413);
    expect(await huge.text()).toMatch(/size: .*2(\.0)? GB/);
    expect((await tus('HEAD', deferred, {})).headers.get('upload-defer-length')).toBe('1');
    const bytes = randomBytes(5000);
    const partly = await tus('PATCH', deferred, { 'upload-offset': '0', ...OCTETS }, bytes.subarray(0, 2000));
    expect(partly.status).toBe(204);
    expect((await tus('PATCH', deferred, { 'upload-offset': '2000', 'upload-length': '1000', ...OCTETS })).status).toBe(400);
    const last = await tus('PATCH', deferred, { 'upload-offset': '2000', 'upload-length': String(bytes.length), ...OCTETS }, bytes.subarray(2000));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-sha256')).toBe(sha256(bytes));

    const old = await create({ 'upload-length': '10' });
    const id = old.split('/').pop()!;
    const record = path.join(stagingDir(configuredSiteRoots(), SITE), `${id}.json`);
    const stored = JSON.parse(await readFile(record, 'utf8')) as { creation_date: string };
    await writeFile(record, JSON.stringify({ ...stored, creation_date: new Date(Date.now() - 8 * 86_400_000).toISOString() }));
    expect((await tus('PATCH', old, { 'upload-offset': '0', ...OCTETS }, randomBytes(10))).status).toBe(410);
    expect(await offsetOf(old)).toBe(0);
  });
});
