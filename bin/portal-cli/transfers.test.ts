// What lets `files put` and `files get` go on after a kill: the fingerprint an upload is found by, the
// JSON files the upload URLs and download ETags live in (as tus-js-client's urlStorage), the meter.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Upload } from 'tus-js-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DownloadRecords, JsonFile, TRANSFER_MEMORY_MS, UploadUrlStorage, downloadKey, progressMeter, uploadFingerprint } from './transfers.mjs';

const PROJECT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const upload = { base: 'https://portal.example/api/v1', projectId: PROJECT, site: 'de-jena', remotePath: 'models/w.bin', localPath: '/data/w.bin', size: 20_000_000, mtimeMs: 1_796_000_000_123.4 };

describe('uploadFingerprint', () => {
  it('is the same for the same file to the same place, wherever it is run from', () => {
    const a = uploadFingerprint(upload);
    expect(a).toMatch(/^portal-cli-upload-[0-9a-f]{64}$/);
    expect(uploadFingerprint({ ...upload })).toBe(a);
    const relative = path.relative(process.cwd(), upload.localPath);
    expect(uploadFingerprint({ ...upload, localPath: relative })).toBe(a);
    // Sub-millisecond noise in the modification time does not matter.
    expect(uploadFingerprint({ ...upload, mtimeMs: 1_796_000_000_123.9 })).toBe(a);
  });

  it.each([
    ['another portal', { base: 'https://other.example/api/v1' }],
    ['another project', { projectId: '00000000-0000-4000-8000-000000000000' }],
    ['another site', { site: 'fi-kajaani' }],
    ['another remote path', { remotePath: 'models/w2.bin' }],
    ['another local file', { localPath: '/data/w2.bin' }],
    ['a changed size', { size: 20_000_001 }],
    ['a changed modification time', { mtimeMs: 1_796_000_001_000 }],
  ])('changes with %s (so that upload starts over)', (_what, change) => {
    expect(uploadFingerprint({ ...upload, ...change })).not.toBe(uploadFingerprint(upload));
  });

  it('downloadKey names a remote path to a local file', () => {
    const key = { base: upload.base, projectId: PROJECT, site: 'de-jena', remotePath: 'a.bin', localPath: '/tmp/a.bin' };
    expect(downloadKey(key)).toBe(downloadKey({ ...key }));
    expect(downloadKey({ ...key, localPath: '/tmp/b.bin' })).not.toBe(downloadKey(key));
    expect(downloadKey({ ...key, remotePath: 'b.bin' })).not.toBe(downloadKey(key));
  });
});

describe('the stores', () => {
  let dir: string;
  let clock: number;
  const now = () => new Date(clock);
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-cli-transfers-'));
    clock = Date.parse('2026-12-02T08:00:00Z');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('UploadUrlStorage keeps one upload URL per fingerprint, readable only by its owner, and forgets it when asked', async () => {
    const file = path.join(dir, 'sub', 'uploads.json');
    const storage = new UploadUrlStorage(file, now);
    expect(await storage.findUploadsByFingerprint('fp-a')).toEqual([]);
    const key = await storage.addUpload('fp-a', { uploadUrl: 'https://portal.example/api/v1/uploads/de-jena.1', size: 5, metadata: { path: 'x' }, creationTime: 'then' });
    expect(key).toMatch(/^tus::fp-a::/);
    await storage.addUpload('fp-b', { uploadUrl: 'https://portal.example/api/v1/uploads/de-jena.2', size: 7 });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(await storage.findUploadsByFingerprint('fp-a')).toEqual([{ uploadUrl: 'https://portal.example/api/v1/uploads/de-jena.1', size: 5, metadata: { path: 'x' }, creationTime: 'then', storedAt: clock, urlStorageKey: key }]);
    expect(await storage.findAllUploads()).toHaveLength(2);

    // A later run's upload of the same fingerprint replaces the first (one URL to resume, never two).
    clock += 1000;
    const replaced = await storage.addUpload('fp-a', { uploadUrl: 'https://portal.example/api/v1/uploads/de-jena.3', size: 5 });
    expect((await storage.findUploadsByFingerprint('fp-a')).map((u: { uploadUrl: string }) => u.uploadUrl)).toEqual(['https://portal.example/api/v1/uploads/de-jena.3']);
    await storage.removeUpload(replaced);
    expect(await storage.findUploadsByFingerprint('fp-a')).toEqual([]);
    expect(await storage.findUploadsByFingerprint('fp-b')).toHaveLength(1);
  });

  it('forgets what is older than the portal keeps an unfinished upload (7 days), and reads a damaged file as empty', async () => {
    const file = path.join(dir, 'uploads.json');
    const storage = new UploadUrlStorage(file, now);
    await storage.addUpload('old', { uploadUrl: 'u1' });
    clock += TRANSFER_MEMORY_MS + 1;
    await storage.addUpload('new', { uploadUrl: 'u2' });
    expect((await storage.findAllUploads()).map((u: { uploadUrl: string }) => u.uploadUrl)).toEqual(['u2']);
    fs.writeFileSync(file, '{"tus::x::1": ');
    expect(await storage.findAllUploads()).toEqual([]);
    await storage.addUpload('again', { uploadUrl: 'u3' });
    expect((await storage.findAllUploads()).map((u: { uploadUrl: string }) => u.uploadUrl)).toEqual(['u3']);
  });

  it('is the urlStorage tus-js-client resumes from: the stored URL for the fingerprint, none for a changed file', async () => {
    const storage = new UploadUrlStorage(path.join(dir, 'uploads.json'), now);
    await storage.addUpload(uploadFingerprint(upload), { uploadUrl: 'https://portal.example/api/v1/uploads/de-jena.abc', size: upload.size });
    const options = (fingerprint: string) => ({ endpoint: `${upload.base}/uploads`, urlStorage: storage, fingerprint: () => Promise.resolve(fingerprint) });
    const same = new Upload(Buffer.alloc(1), options(uploadFingerprint(upload)));
    const previous = await same.findPreviousUploads();
    expect(previous.map((p) => p.uploadUrl)).toEqual(['https://portal.example/api/v1/uploads/de-jena.abc']);
    same.resumeFromPreviousUpload(previous[0]!);
    expect(same.url).toBe('https://portal.example/api/v1/uploads/de-jena.abc');
    const changed = new Upload(Buffer.alloc(1), options(uploadFingerprint({ ...upload, mtimeMs: upload.mtimeMs + 5000 })));
    expect(await changed.findPreviousUploads()).toEqual([]);
  });

  it('DownloadRecords keeps the ETag of an unfinished download', () => {
    const records = new DownloadRecords(path.join(dir, 'downloads.json'), now);
    expect(records.get('k')).toBeNull();
    records.set('k', { etag: '"1a-2b-3c"', size: 42 });
    expect(records.get('k')).toEqual({ etag: '"1a-2b-3c"', size: 42, storedAt: clock });
    records.remove('k');
    expect(records.get('k')).toBeNull();
    records.remove('never'); // nothing to do
  });

  it('a folder that cannot be written warns once and lets the transfer go on', () => {
    const warnings: string[] = [];
    const blocker = path.join(dir, 'a-file');
    fs.writeFileSync(blocker, '');
    const json = new JsonFile(path.join(blocker, 'downloads.json'), now, (message: string) => warnings.push(message));
    expect(json.update((data: Record<string, unknown>) => ((data.k = { storedAt: clock }), 'done'))).toBe('done');
    json.update(() => undefined);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/cannot write .*downloads\.json .*cannot be resumed/);
  });
});

describe('progressMeter', () => {
  function tty(isTTY: boolean) {
    let clock = 0;
    const written: string[] = [];
    const io = { stderrIsTTY: isTTY, stderr: { write: (text: string) => written.push(text) }, now: () => new Date(clock) };
    return { io, written, advance: (ms: number) => (clock += ms) };
  }

  it('shows the share done and this run’s speed on one line, at most five times a second', () => {
    const t = tty(true);
    const meter = progressMeter(t.io, { total: 20_000_000, startAt: 10_000_000 });
    t.advance(1000);
    meter.update(15_000_000);
    t.advance(100);
    meter.update(15_500_000); // too soon: not drawn
    t.advance(900);
    meter.update(20_000_000);
    meter.finish();
    expect(t.written).toEqual(['\r  75%  15.0 MB of 20.0 MB  5.00 MB/s', '\r  100%  20.0 MB of 20.0 MB  5.00 MB/s', '\r  100%  20.0 MB of 20.0 MB  5.00 MB/s\n']);
  });

  it('without a total shows the bytes; off a terminal says nothing', () => {
    const t = tty(true);
    const meter = progressMeter(t.io, {});
    t.advance(2000);
    meter.update(3_000_000);
    expect(t.written).toEqual(['\r  3.00 MB  1.50 MB/s']);
    const quiet = tty(false);
    const silent = progressMeter(quiet.io, { total: 10 });
    quiet.advance(1000);
    silent.update(5);
    silent.finish();
    expect(quiet.written).toEqual([]);
  });
});
