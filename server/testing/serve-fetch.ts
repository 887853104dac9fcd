// serveFetch puts a fetch-style handler (the REST API's, `(Request) => Promise<Response>`) behind a real
// HTTP server on 127.0.0.1, as the portal's server (scripts/server.mjs → transfers-http.ts) serves the
// API: the request's body read whole (the API's bodies are small), the answer written by the same
// writeResponse (a stream's events at once; a gateway answer's Node stream piped as it is), and a client
// that leaves ends the answer's body. For tests that call the API with real clients (the
// official `openai` client, curl).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeResponse } from '~/server/api/node-response';

export interface ServedFetch {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

export async function serveFetch(handler: (req: Request) => Promise<Response>): Promise<ServedFetch> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const gone = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) gone.abort();
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      void handler(new Request(`http://portal.test${req.url}`, { method: req.method, headers, body, signal: gone.signal })).then(
        (response) => writeResponse(res, response, gone.signal),
        () => res.writeHead(500).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
