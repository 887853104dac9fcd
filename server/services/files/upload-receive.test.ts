import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { receiveAt } from './upload-receive';

const dir = mkdtempSync(path.join(tmpdir(), 'upload-receive-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A web stream of `bytes` in pieces of `piece`, then an end, an error, or nothing more. */
function streamOf(bytes: Uint8Array, piece: number, then: 'end' | 'fail' | 'hang' = 'end'): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < bytes.length) {
        controller.enqueue(bytes.slice(at, at + piece));
        at += piece;
        return;
      }
      if (then === 'end') controller.close();
      else if (then === 'fail') controller.error(new Error('reset'));
      else return new Promise<void>(() => {});
    },
  });
}

async function fileWith(bytes: Uint8Array): Promise<string> {
  const file = path.join(dir, randomBytes(6).toString('hex'));
  await writeFile(file, bytes);
  return file;
}

describe('receiveAt', () => {
  it('writes a body at its offset in batches, handing each byte to onChunk once, in order', async () => {
    const head = randomBytes(1000);
    const file = await fileWith(head);
    const body = randomBytes(3 * 1024 * 1024 + 123);
    const seen: Buffer[] = [];
    const received = await receiveAt(file, head.length, streamOf(body, 65_536), { limit: body.length, onChunk: (c) => seen.push(Buffer.from(c)) });
    expect(received).toEqual({ bytes: body.length, end: 'done' });
    expect(Buffer.concat(seen).equals(body)).toBe(true);
    expect((await readFile(file)).equals(Buffer.concat([head, body]))).toBe(true);
  });

  it('reads a Node stream as well, with batches of any size', async () => {
    const file = await fileWith(Buffer.alloc(0));
    const body = randomBytes(500_000);
    const received = await receiveAt(file, 0, Readable.from([body.subarray(0, 1), body.subarray(1, 300_000), body.subarray(300_000)]), { limit: body.length, batchBytes: 1 });
    expect(received.bytes).toBe(body.length);
    expect((await readFile(file)).equals(body)).toBe(true);
  });

  it('writes the first `limit` bytes of a longer body and says it was too long', async () => {
    const file = await fileWith(Buffer.alloc(0));
    const body = randomBytes(200_000);
    const seen: number[] = [];
    const received = await receiveAt(file, 0, streamOf(body, 65_536), { limit: 100_000, onChunk: (c) => seen.push(c.byteLength) });
    expect(received).toEqual({ bytes: 100_000, end: 'too-long' });
    expect(seen.reduce((a, b) => a + b, 0)).toBe(100_000);
    expect((await readFile(file)).equals(body.subarray(0, 100_000))).toBe(true);
  });

  it('keeps what arrived before the body failed (its sender gone)', async () => {
    const file = await fileWith(Buffer.alloc(0));
    const body = randomBytes(300_001);
    const received = await receiveAt(file, 0, streamOf(body, 65_536, 'fail'), { limit: 1_000_000 });
    expect(received.end).toBe('aborted');
    expect(received.bytes).toBe(body.length);
    expect((received.error as Error).message).toBe('reset');
    expect((await readFile(file)).equals(body)).toBe(true);
  });

  it('stops when asked, keeping what arrived', async () => {
    const file = await fileWith(Buffer.alloc(0));
    const body = randomBytes(100_000);
    const stop = new AbortController();
    const receiving = receiveAt(file, 0, streamOf(body, 10_000, 'hang'), { limit: 1_000_000, stop: stop.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    stop.abort();
    expect(await receiving).toEqual({ bytes: body.length, end: 'stopped' });
    expect((await readFile(file)).equals(body)).toBe(true);
  });

  it('throws when a write fails (a full disk), after the write in flight settles', async () => {
    const body = randomBytes(1024 * 1024);
    await expect(receiveAt('/dev/full', 0, streamOf(body, 65_536), { limit: body.length })).rejects.toMatchObject({ code: 'ENOSPC' });
  });
});
