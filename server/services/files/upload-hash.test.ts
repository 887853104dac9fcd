import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HASH_BACKLOG_BYTES, UploadHasher } from './upload-hash';

const dir = mkdtempSync(path.join(tmpdir(), 'upload-hash-'));
const hasher = new UploadHasher();
afterAll(async () => {
  await hasher.close();
  await rm(dir, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
/** Pieces of `bytes` from `from` to `to`, each a buffer of its own (as a request's body gives them). */
const pieces = (bytes: Buffer, from: number, to: number, size = 65_536) => {
  const out: Uint8Array[] = [];
  for (let at = from; at < to; at += size) out.push(new Uint8Array(bytes.subarray(at, Math.min(to, at + size))));
  return out;
};

async function staged(bytes: Buffer): Promise<{ id: string; file: string }> {
  const id = randomBytes(6).toString('hex');
  const file = path.join(dir, id);
  await writeFile(file, bytes);
  return { id, file };
}

describe('UploadHasher', () => {
  it('hashes the bytes handed to it, in order, moving them out of the caller', async () => {
    const bytes = randomBytes(1_000_000);
    const { id, file } = await staged(bytes);
    const first = pieces(bytes, 0, 600_000);
    hasher.written(id, file, 0, first);
    expect(first.every((b) => b.byteLength === 0)).toBe(true); // moved, not copied
    hasher.written(id, file, 600_000, pieces(bytes, 600_000, bytes.length));
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
  });

  it('reads from the file what it was not handed (a restart, a failed write), and skips what it had', async () => {
    const bytes = randomBytes(3_000_000);
    const { id, file } = await staged(bytes);
    hasher.written(id, file, 1_000_000, pieces(bytes, 1_000_000, 1_500_000)); // the first MB from the file
    hasher.written(id, file, 1_400_000, pieces(bytes, 1_400_000, 2_000_000)); // overlaps by 100 kB
    // The rest never handed over: read at the digest.
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
    // Asked again (no state left), it hashes the file.
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
  });

  it('copies a buffer that is part of a larger one rather than take it from its owner', async () => {
    const bytes = randomBytes(100_000);
    const { id, file } = await staged(bytes);
    const whole = Buffer.from(bytes);
    hasher.written(id, file, 0, [whole.subarray(0, 50_000), whole.subarray(50_000)]);
    expect(whole.byteLength).toBe(100_000);
    expect(whole.equals(bytes)).toBe(true);
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
  });

  it('past its backlog it is only told where the file reaches, and reads those bytes itself', async () => {
    const bytes = randomBytes(HASH_BACKLOG_BYTES + 16 * 1024 * 1024);
    const { id, file } = await staged(bytes);
    // Handed over faster than it hashes (all in one turn): the last ones exceed the backlog.
    for (let at = 0; at < bytes.length; at += 2 * 1024 * 1024) hasher.written(id, file, at, pieces(bytes, at, at + 2 * 1024 * 1024, 256 * 1024));
    expect(await hasher.digestOf(id, file, bytes.length)).toBe(sha256(bytes));
  });

  it('answers null for a file shorter than the upload, and after it is stopped', async () => {
    const bytes = randomBytes(10_000);
    const { id, file } = await staged(bytes);
    expect(await hasher.digestOf(id, file, bytes.length + 1)).toBeNull();
    const other = new UploadHasher();
    const asked = other.digestOf(id, file, bytes.length);
    await other.close();
    expect(await asked).toBeNull();
  });
});
