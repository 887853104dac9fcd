// serveFetch puts a fetch-style handler (the REST API's, `(Request) => Promise<Response>`) behind a real
// HTTP server on 127.0.0.1, as Next's route serves it: the request's body read whole (the API's bodies
// are small), the answer's body written as it comes (a stream's events at once), and a client that
// leaves cancels the answer's body, as Next does. For tests that call the API with real clients (the
// official `openai` client, curl).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
        async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers));
          if (!response.body) return res.end();
          const reader = response.body.getReader();
          res.on('close', () => {
            if (!res.writableFinished) void reader.cancel().catch(() => undefined);
          });
          try {
            for (let next = await reader.read(); !next.done; next = await reader.read()) res.write(next.value);
            res.end();
          } catch {
            res.destroy();
          }
        },
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
