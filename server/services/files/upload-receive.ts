// The bytes of one tus request, written where they belong in the staged file as they arrive. The body is
// read chunk by chunk (a web ReadableStream, as a route handler gets it, or a Node stream), each chunk
// handed to `onChunk` once, in order, if asked; chunks are gathered into small batches written
// with one `writev` at their offset, at most one write in flight while the next batch gathers — so a
// PATCH of 16 MiB holds at most two batches (BATCH_BYTES each) however fast it arrives, and makes a few
// dozen system calls instead of one per 64 KiB chunk. Small batches keep the bytes in the CPU's cache
// between their arrival and their write (bench/files.ts, BENCHMARKS.md). `onWritten` hears where the
// file's bytes reach after each write: the SHA-256 is taken from there in a worker thread (upload-hash.ts).
import { open, type FileHandle } from 'node:fs/promises';

/** What a batch gathers before it is written (256 KiB: 4 of the 64 KiB chunks a socket read gives). */
export const BATCH_BYTES = 256 * 1024;

/** How a body's reading ended: all of it; more than the upload may take; its sender gone; or stopped on request. */
export type ReceiveEnd = 'done' | 'too-long' | 'aborted' | 'stopped';

export interface Received {
  /** The bytes written from `offset` on: every byte read and handed to `onChunk`, none more. */
  bytes: number;
  end: ReceiveEnd;
  /** The body's error when it ended `aborted`. */
  error?: unknown;
}

/** A body: a web stream (a route handler's `request.body`) or any async iterable of bytes (a Node stream). */
export type Body = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

interface Chunks {
  next(): Promise<Uint8Array | null>;
  cancel(): Promise<void>;
}

function chunksOf(body: Body): Chunks {
  if (typeof (body as ReadableStream<Uint8Array>).getReader === 'function') {
    const reader = (body as ReadableStream<Uint8Array>).getReader();
    return {
      next: async () => {
        const { value, done } = await reader.read();
        return done ? null : value;
      },
      cancel: () => reader.cancel().catch(() => undefined),
    };
  }
  const iterator = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  return {
    next: async () => {
      const step: IteratorResult<Uint8Array, unknown> = await iterator.next();
      return step.done ? null : step.value;
    },
    cancel: async () => {
      await iterator.return?.().catch(() => undefined);
    },
  };
}

/**
 * receiveAt writes `body` into `file` (which exists) from `offset` on, at most `limit` bytes, and tells how
 * many it wrote and why it ended. A body that errors (its sender went away) or is stopped (`stop`) keeps
 * what arrived before: those bytes are written, and counted, before this returns — tus's rule, the upload
 * goes on from there. A body longer than `limit` has its first `limit` bytes written and ends `too-long`.
 * A failed write throws (after the write in flight settles); `onWritten` has heard of every batch written
 * before it.
 */
export async function receiveAt(
  file: string,
  offset: number,
  body: Body,
  o: { limit: number; onChunk?: (chunk: Uint8Array) => void; onWritten?: (end: number) => void; stop?: AbortSignal; batchBytes?: number },
): Promise<Received> {
  const batchBytes = o.batchBytes ?? BATCH_BYTES;
  const chunks = chunksOf(body);
  let handle: FileHandle;
  try {
    handle = await open(file, 'r+');
  } catch (error) {
    await chunks.cancel();
    throw error;
  }
  const onStop = () => void chunks.cancel();
  if (o.stop?.aborted) await chunks.cancel();
  else o.stop?.addEventListener('abort', onStop, { once: true });
  let batch: Uint8Array[] = [];
  let gathered = 0;
  let at = offset;
  // At most one write in flight while the next batch gathers; a failed write is kept (never left
  // unhandled) and thrown at the next turn.
  const writing: { inFlight: Promise<void>; failure: { error: unknown } | null } = { inFlight: Promise.resolve(), failure: null };
  const settle = async () => {
    await writing.inFlight;
    if (writing.failure) throw writing.failure.error;
  };
  const writeBatch = async () => {
    if (gathered === 0) return;
    const buffers = batch;
    const length = gathered;
    const position = at;
    batch = [];
    gathered = 0;
    at += length;
    await settle();
    writing.inFlight = writeFully(handle, buffers, length, position)
      .then(() => o.onWritten?.(position + length))
      .catch((error: unknown) => {
        writing.failure ??= { error };
      });
  };
  let received = 0;
  let end: ReceiveEnd = 'done';
  let error: unknown;
  try {
    for (;;) {
      let chunk: Uint8Array | null;
      try {
        chunk = await chunks.next();
      } catch (cause) {
        if (o.stop?.aborted) end = 'stopped';
        else {
          end = 'aborted';
          error = cause;
        }
        break;
      }
      if (chunk === null) {
        if (o.stop?.aborted) end = 'stopped';
        break;
      }
      if (received + chunk.byteLength > o.limit) {
        chunk = chunk.subarray(0, o.limit - received);
        end = 'too-long';
      }
      if (chunk.byteLength > 0) {
        o.onChunk?.(chunk);
        batch.push(chunk);
        gathered += chunk.byteLength;
        received += chunk.byteLength;
      }
      if (end === 'too-long') {
        await chunks.cancel();
        break;
      }
      if (gathered >= batchBytes) await writeBatch();
    }
    await writeBatch();
    await settle();
  } catch (failure) {
    // A write failed: the one in flight settles before the file is closed, the body is let go.
    await writing.inFlight;
    await chunks.cancel();
    throw failure;
  } finally {
    o.stop?.removeEventListener('abort', onStop);
    await handle.close();
  }
  return { bytes: received, end, ...(end === 'aborted' ? { error } : {}) };
}

async function writeFully(handle: FileHandle, buffers: Uint8Array[], length: number, position: number): Promise<void> {
  let done = (await handle.writev(buffers, position)).bytesWritten;
  // A short write (rare: a full disk says so with an error) goes on from where it stopped.
  while (done < length) {
    const rest = Buffer.concat(buffers).subarray(done);
    const { bytesWritten } = await handle.write(rest, 0, rest.byteLength, position + done);
    if (bytesWritten === 0) throw new Error(`a write at ${position + done} took no bytes`);
    done += bytesWritten;
  }
}
