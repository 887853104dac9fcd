// The gateway's health probes: a round asked for while another is under way is a fresh one, so what it
// reports is what the servers answer after the call, not before it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHealthy, probeReplicas, watchReplicas } from './health';

describe('replica health probes', () => {
  let server: Server;
  let port = 0;
  let answering = true;
  const seen: number[] = [];
  beforeAll(async () => {
    // Answers each probe after 150 ms: a round is still under way when the next is asked for.
    server = createServer((request, response) => {
      seen.push(performance.now());
      setTimeout(() => response.writeHead(answering ? 200 : 503).end(), 150);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers a call made during a round with the round after it, one at most however many ask', async () => {
    const replica = { jobId: 'health-test-job', siteId: 'de-jena', model: 'lab/probe', address: '127.0.0.1', port, secret: 'x' };
    watchReplicas([replica]);
    await probeReplicas();
    expect(isHealthy(replica.jobId)).toBe(true);
    const before = seen.length;
    const running = probeReplicas(); // a round begun while the server still answers
    await new Promise((r) => setTimeout(r, 20));
    answering = false; // then the server stops answering well
    const asked = [probeReplicas(), probeReplicas(), probeReplicas()];
    await Promise.all([running, ...asked]);
    // The rounds asked for during the first are one more round, which saw the server as it is now.
    expect(seen.length - before).toBe(2);
    expect(isHealthy(replica.jobId)).toBe(false);
    answering = true;
    await probeReplicas();
    expect(isHealthy(replica.jobId)).toBe(true);
  });
});
