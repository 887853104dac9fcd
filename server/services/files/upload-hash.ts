// The SHA-256 of uploads, taken in a worker thread as their bytes land, so the request's own thread never
// hashes (a 1 GiB upload is 0.6 s of SHA-256 on this machine's cores; BENCHMARKS.md). As a PATCH writes,
// the worker is told every few MiB how far the upload's staged file now reaches, and reads on from where
// its hash stands to there — from the page cache, 1 MiB at a time, so neither thread holds more than that
// for it — while the next bytes arrive. The staged file's bytes never change once written (tus only
// appends), so the hash covers the file from its first byte without a gap: after a restart (no hash
// kept) the worker starts from the first byte again and catches up. The last answer asks for the digest
// of the whole upload, which waits for at most the last few MiB. Should the worker fail, digestOf answers
// null and the caller hashes the file (placeUpload).
import { Worker } from 'node:worker_threads';
import { logger } from '~/server/observability/log';

/** How often, in bytes written, the worker is told where an upload's file reaches (each message wakes it): 2 MiB. */
export const HASH_STEP_BYTES = 2 * 1024 * 1024;

/** The most uploads the worker keeps a hash for; past it the oldest is forgotten (hashed from its file when placed). */
const MAX_TRACKED = 10_000;

// Plain CommonJS, run as the worker's code as it stands (no bundler touches a string). A hash per upload,
// { file, hash, at }: `landed` says the file holds bytes up to `to` (the hash reads on to there),
// `digest` finishes one, `forget` drops one.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
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
parentPort.on('message', (m) => {
  try {
    if (m.type === 'landed') readOn(stateOf(m.id, m.file), m.to);
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

  private workerOf(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true, name: 'upload-hash' });
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
    return worker;
  }

  private post(message: object): void {
    try {
      this.workerOf().postMessage(message);
    } catch (error) {
      // No worker: the digest, asked later, is null and the file is hashed then.
      logger().warn({ err: error }, 'the upload hash worker could not be reached');
    }
  }

  /** landed tells the worker an upload's file now holds its bytes up to `to`: it hashes on to there. */
  landed(id: string, file: string, to: number): void {
    this.post({ type: 'landed', id, file, to });
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
