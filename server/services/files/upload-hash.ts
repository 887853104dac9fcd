// The SHA-256 of uploads, taken in a worker thread as their bytes land, so the request's own thread never
// hashes (a 1 GiB upload is 0.6 s of SHA-256 on this machine's cores; BENCHMARKS.md). Once a batch of a
// PATCH is written, its buffers — the request's, which nothing else holds — are handed to the worker
// (moved, not copied) and hashed there while the next ones arrive. The worker's hash of an upload covers
// its file from the first byte on, without a gap: where it was not handed bytes (a restart, a failed
// write, or the worker too far behind — HASH_BACKLOG_BYTES), it reads them from the staged file, whose
// bytes never change once written (tus only appends). The last answer asks for the digest of the whole
// upload. Should the worker fail, digestOf answers null and the caller hashes the file (placeUpload).
import { Worker } from 'node:worker_threads';
import { logger } from '~/server/observability/log';

/** What is handed to the worker at once (each message wakes it): 2 MiB. */
export const HASH_HAND_BYTES = 2 * 1024 * 1024;

/** The most bytes handed to the worker and not hashed yet; past it the worker is told where the file reaches and reads the bytes itself. */
export const HASH_BACKLOG_BYTES = 32 * 1024 * 1024;

/** The most uploads the worker keeps a hash for; past it the oldest is forgotten (hashed from its file when placed). */
const MAX_TRACKED = 10_000;

// Plain CommonJS, run as the worker's code as it stands (no bundler touches a string). A hash per upload,
// { file, hash, at }: `bytes` brings an upload's bytes from `at` on (what lies before it and after the
// hash is read from the file first; what the hash has already is skipped), `landed` says the file holds
// bytes up to `to`, `digest` finishes one. `hashed[0]` counts the bytes handed over and done with.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const hashed = new BigInt64Array(workerData.hashed);
const states = new Map();
const piece = Buffer.allocUnsafe(1024 * 1024);
function stateOf(id, file) {
  let state = states.get(id);
  if (!state || state.file !== file) {
    state = { file, hash: createHash('sha256'), at: 0 };
    states.delete(id);
    states.set(id, state);
    if (states.size > ${MAX_TRACKED}) states.delete(states.keys().next().value);
  }
  return state;
}
function readOn(state, to) {
  if (state.at >= to) return;
  const fd = fs.openSync(state.file, 'r');
  try {
    while (state.at < to) {
      const n = fs.readSync(fd, piece, 0, Math.min(piece.length, to - state.at), state.at);
      if (n <= 0) throw new Error('the file ends at ' + state.at + ', before ' + to);
      state.hash.update(piece.subarray(0, n));
      state.at += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}
function take(state, at, buffers) {
  readOn(state, at);
  for (const buffer of buffers) {
    const bytes = new Uint8Array(buffer);
    const skip = Math.min(bytes.length, Math.max(0, state.at - at));
    if (skip < bytes.length) state.hash.update(bytes.subarray(skip));
    at += bytes.length;
    state.at = Math.max(state.at, at);
  }
}
parentPort.on('message', (m) => {
  try {
    if (m.type === 'bytes') take(stateOf(m.id, m.file), m.at, m.buffers);
    else if (m.type === 'landed') readOn(stateOf(m.id, m.file), m.to);
    else if (m.type === 'forget') states.delete(m.id);
    else if (m.type === 'digest') {
      const state = stateOf(m.id, m.file);
      readOn(state, m.size);
      states.delete(m.id);
      parentPort.postMessage({ ask: m.ask, sha256: state.at === m.size ? state.hash.digest('hex') : null });
    }
  } catch (error) {
    states.delete(m.id);
    if (m.type === 'digest') parentPort.postMessage({ ask: m.ask, sha256: null, error: String((error && error.message) || error) });
  } finally {
    if (m.type === 'bytes') Atomics.add(hashed, 0, BigInt(m.length));
  }
});
`;

interface Answer {
  ask: number;
  sha256: string | null;
  error?: string;
}

/** UploadHasher keeps the worker (started at its first use, never holding the process open) and the digests asked of it. */
export class UploadHasher {
  private worker: Worker | null = null;
  private readonly asks = new Map<number, (sha256: string | null) => void>();
  private nextAsk = 1;
  /** Bytes handed to the worker (here) and done with (by the worker, in the shared counter). */
  private handed = 0n;
  private hashed: BigInt64Array | null = null;

  private workerOf(): Worker {
    if (this.worker) return this.worker;
    const shared = new SharedArrayBuffer(8);
    const worker = new Worker(WORKER_SOURCE, { eval: true, name: 'upload-hash', workerData: { hashed: shared } });
    worker.unref();
    worker.on('message', (answer: Answer) => {
      if (answer.error) logger().warn({ error: answer.error }, 'hashing an upload in the worker failed; it is hashed from its file');
      this.asks.get(answer.ask)?.(answer.sha256);
      this.asks.delete(answer.ask);
      if (this.asks.size === 0) this.worker?.unref();
    });
    const lost = (error?: unknown) => {
      if (this.worker !== worker) return;
      this.worker = null;
      if (error) logger().warn({ err: error }, 'the upload hash worker stopped; uploads it hashed are hashed from their files');
      for (const answer of this.asks.values()) answer(null);
      this.asks.clear();
    };
    worker.on('error', lost);
    worker.on('exit', () => lost());
    this.worker = worker;
    this.hashed = new BigInt64Array(shared);
    this.handed = 0n;
    return worker;
  }

  private post(message: object, transfer: ArrayBuffer[] = []): void {
    try {
      this.workerOf().postMessage(message, transfer);
    } catch (error) {
      // No worker: the digest, asked later, is null and the file is hashed then.
      logger().warn({ err: error }, 'the upload hash worker could not be reached');
    }
  }

  /**
   * written hands the worker an upload's bytes just written at `at` — buffers nothing else holds, moved
   * to the worker (a buffer that is part of a larger one is copied). With too much handed over and not
   * hashed yet, it only says where the file now reaches, and the worker reads those bytes from it.
   */
  written(id: string, file: string, at: number, buffers: readonly Uint8Array[]): void {
    const length = buffers.reduce((sum, b) => sum + b.byteLength, 0);
    const worker = this.worker;
    if (worker && this.hashed && this.handed - Atomics.load(this.hashed, 0) > BigInt(HASH_BACKLOG_BYTES)) {
      this.post({ type: 'landed', id, file, to: at + length });
      return;
    }
    const moved = buffers.map((b) => (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer ? b.buffer : new Uint8Array(b).buffer));
    this.post({ type: 'bytes', id, file, at, length, buffers: moved }, moved);
    this.handed += BigInt(length);
  }

  /** forget drops an upload's hash (given up, or removed). */
  forget(id: string): void {
    if (this.worker) this.post({ type: 'forget', id });
  }

  /** digestOf gives the SHA-256 of an upload's first `size` bytes (all of them, once it is complete), or null should the worker fail. */
  digestOf(id: string, file: string, size: number): Promise<string | null> {
    let worker: Worker;
    try {
      worker = this.workerOf();
    } catch (error) {
      logger().warn({ err: error }, 'the upload hash worker could not be reached');
      return Promise.resolve(null);
    }
    const ask = this.nextAsk++;
    return new Promise<string | null>((resolve) => {
      this.asks.set(ask, resolve);
      worker.ref(); // a digest asked keeps the process until it is answered
      worker.postMessage({ type: 'digest', id, file, size, ask });
    });
  }

  /** close stops the worker (tests). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    for (const answer of this.asks.values()) answer(null);
    this.asks.clear();
    await worker?.terminate();
  }
}
