// Answers whose body is a Node stream (the gateway's model calls, issue #29), and writing a web Response
// to a Node response. A model's stream passes thousands of events a second: through web streams each
// event is several promises (the reader's, the pull's, the writer's), and with the async-context hooks
// Next's request scope turns on, promises are what costs most. So the gateway keeps the answer a Node
// stream (the model server's socket → the usage tap → the client's socket, no promise per event) and
// attaches it to the Response it returns: the portal's HTTP server (transfers-http.ts) pipes it to the
// socket; anything else (Next's route, a test reading the Response) reads the same stream as the
// Response's web body, which starts reading only when it is read.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

const nodeBodies = new WeakMap<Response, Readable>();

/** responseOfStream is a Response whose body is `body`: piped as it is by writeResponse, else read as a web stream. */
export function responseOfStream(body: Readable, init: ResponseInit): Response {
  const response = new Response(webStreamOf(body), init);
  nodeBodies.set(response, body);
  return response;
}

/** webStreamOf reads a Node stream as a web stream, from its first read on (until then the Node stream is untouched). */
function webStreamOf(body: Readable): ReadableStream<Uint8Array> {
  let listening = false;
  let over = false;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!listening) {
          listening = true;
          body.on('data', (chunk: Buffer) => {
            if (over) return;
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            if ((controller.desiredSize ?? 1) <= 0) body.pause();
          });
          body.once('end', () => {
            if (over) return;
            over = true;
            controller.close();
          });
          body.once('close', () => {
            if (over) return;
            over = true;
            controller.error(body.errored ?? new Error('the answer ended before its end'));
          });
        }
        body.resume();
      },
      cancel() {
        over = true;
        body.destroy();
      },
    },
    // Nothing is read ahead: a web stream pulls at once to fill its queue, which would take the answer from writeResponse's pipe.
    { highWaterMark: 0 },
  );
}

/**
 * writeResponse writes a web Response to a Node response: status, headers (Content-Length kept), then the
 * body. A Node stream body (responseOfStream) is piped as it is, with backpressure; a web body is written
 * chunk by chunk as it is read (a file's are DOWNLOAD_CHUNK_BYTES). A body that fails mid-way (a file
 * that shrank, a model server that died) destroys the connection, so the client sees a broken answer,
 * never a short one that looks whole; a client that went away (`gone`) ends the body (which closes the
 * file, or the model server's answer).
 */
export async function writeResponse(res: ServerResponse, response: Response, gone: AbortSignal, onBodyError?: (error: unknown) => void): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) res.setHeader(name, value);
  const node = response.bodyUsed ? undefined : nodeBodies.get(response);
  if (node) return pipeNode(node, res, gone, onBodyError);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const onGone = () => void reader.cancel(new Error('the client went away')).catch(() => undefined);
  gone.addEventListener('abort', onGone, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone.aborted) break;
      if (!res.write(value)) await drained(res);
    }
    if (!gone.aborted) res.end();
  } catch (error) {
    if (!gone.aborted) onBodyError?.(error);
    res.destroy();
  } finally {
    gone.removeEventListener('abort', onGone);
  }
}

/** pipeNode pipes a Node stream body to the response; resolves when the response is finished or closed. */
function pipeNode(body: Readable, res: ServerResponse, gone: AbortSignal, onBodyError?: (error: unknown) => void): Promise<void> {
  return new Promise((resolve) => {
    // The client went away before the end (also before the answer began): the body is ended (the model
    // call is charged what it was sent).
    const leave = () => {
      if (!body.readableEnded) body.destroy();
      resolve();
    };
    if (gone.aborted) {
      leave();
      return;
    }
    gone.addEventListener('abort', leave, { once: true });
    res.once('close', leave);
    body.once('error', (error) => {
      onBodyError?.(error);
      res.destroy();
    });
    res.flushHeaders();
    body.pipe(res);
  });
}

/** drained waits until the response can take more (drain) or is gone (close), leaving no listener behind. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
