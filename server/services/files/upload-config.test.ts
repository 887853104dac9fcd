// An upload's metadata file is replaced whole: a reader never finds it half-written (a HEAD beside a
// PATCH that records its offset was answered 404 under load when tus's store rewrote the file in place).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type FileConfigstore } from '@tus/file-store';
import { Upload } from '@tus/utils';
import { afterAll, describe, expect, it } from 'vitest';
import { AtomicConfigstore, newUploadId } from './uploads';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portal-upload-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How many of `rounds` reads, each racing a write of the same upload, found no upload at all. */
async function missedReads(store: FileConfigstore, rounds: number): Promise<number> {
  const id = newUploadId('de-jena');
  // Metadata of a realistic size: the portal's fields and a long file name.
  const upload = (offset: number) => new Upload({ id, size: 1 << 30, offset, metadata: { projectId: 'p'.repeat(36), site: 'de-jena', path: `data/${'x'.repeat(400)}.bin`, userId: 'u'.repeat(36), orgId: 'o'.repeat(36) } });
  await store.set(id, upload(0));
  let missed = 0;
  for (let i = 1; i <= rounds; i++) {
    const [, read] = await Promise.all([store.set(id, upload(i)), store.get(id)]);
    if (read === undefined) missed++;
  }
  return missed;
}

describe('the upload metadata store', () => {
  it('is never seen half-written by a read racing a write, and leaves no temporary file behind', async () => {
    expect(await missedReads(new AtomicConfigstore(dir), 300)).toBe(0);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a key that is not an upload id (no path through it)', async () => {
    await expect(new AtomicConfigstore(dir).set('../escape', new Upload({ id: 'x', size: 1, offset: 0 }))).rejects.toThrow(/not an upload id/);
  });
});
