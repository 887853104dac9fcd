import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { appendFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UploadHasher } from './upload-hash';

const dir = mkdtempSync(path.join(tmpdir(), 'upload-hash-'));
const hasher = new UploadHasher();
afterAll(async () => {
  await hasher.close();
  await rm(dir, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function staged(bytes: Buffer): Promise<{ id: string; file: string }> {
  const id = randomBytes(6).toString('hex');
  const file = path.join(dir, id);
  await writeFile(file, bytes);
  return { id, file };
}

describe('UploadHasher', () => {
  it('hashes the staged file on as it is told its bytes landed, and finishes it at the digest', async () => {
    const bytes = randomBytes(3_000_000);
    const { id, file } = await staged(bytes.subarray(0, 1_000_000));
    hasher.landed(id, file, 600_000);
    hasher.landed(id, file, 1_000_000);
    await appendFile(file, bytes.subarray(1_000_000));
    hasher.landed(id, file, 2_000_000);
    // The rest it was never told of: read at the digest.
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
  });

  it('hashes from the first byte what it was never told of (a restart), and told twice it reads once', async () => {
    const bytes = randomBytes(2_500_000);
    const { id, file } = await staged(bytes);
    hasher.landed(id, file, 2_000_000);
    hasher.landed(id, file, 1_500_000);
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
    // Asked again (no state left), it hashes the file.
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
  });

  it('forgets an upload given up', async () => {
    const bytes = randomBytes(100_000);
    const { id, file } = await staged(bytes);
    hasher.landed(id, file, 50_000);
    hasher.forget(id);
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
  });

  it('answers null for a file shorter than the upload, and once it is stopped', async () => {
    const bytes = randomBytes(10_000);
    const { id, file } = await staged(bytes);
    expect(await hasher.digestOf(id, file, bytes.length + 1)).toBeNull();
    const other = new UploadHasher();
    const asked = other.digestOf(id, file, bytes.length);
    await other.close();
    expect(await asked).toBeNull();
  });
});
