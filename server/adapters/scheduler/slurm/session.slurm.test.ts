// An interactive session on a real Slurm (issue #28): a batch job whose script execs the session
// launcher on its node; the launcher starts Debian's Jupyter there and writes its connection file into
// the job's folder; the portal's proxy finds the node among the job's nodes, reaches it at its NodeAddr
// with the secret, and the person's browser gets Jupyter through it (the secret in no answer). Ending
// the session stops the app; the job ends COMPLETED, charged the time it ran.
import { randomBytes, randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encode } from 'next-auth/jwt';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allocations, jobs } from '~/db/schema';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { createSessionProxy } from '~/server/api/sessions-http';
import { startSession as startPortalSession } from '~/server/services/identity/sessions';
import { sessionAccess } from '~/server/services/sessions/proxy-access';
import { connectionFile } from '~/server/services/sessions/sessions';
import { scontrolJob, useSlurmPortal, waitForJson, waitUntil } from './testing';

describe('an interactive session on a real Slurm', () => {
  const slurm = useSlurmPortal();
  const now = () => new Date();

  it('runs Jupyter on the node as a batch job, reachable at the node with its secret only, and stops it when ended', { timeout: 300_000 }, async () => {
    const { db, port } = slurm;
    const { owner, allocationId, projectId, api } = await slurm.newTenant('Slurm Session');
    const started = await api.session.start({ allocationId, resourceClassId: 'h100', app: 'jupyter', gpus: 1, walltimeMinutes: 10, idleTimeoutMinutes: 30, idempotencyKey: randomUUID() });
    const row = async () => (await db.select().from(jobs).where(eq(jobs.id, started.id)))[0]!;
    expect(await waitUntil(async () => (await reconcileOnce(db, port, now()), (await row()).state === 'RUNNING'), 120)).toBe(true);

    // The node's launcher writes the connection file once Jupyter answers.
    const file = connectionFile(configuredSiteRoots(), { id: started.id, siteId: 'de-jena', projectId });
    const connection = await waitForJson<{ host: string; port: number; secret: string; basePath: string }>(file);
    expect(connection).toBeDefined();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const job = await row();
    expect(job.nodeList).toContain(connection!.host);
    expect(connection!.basePath).toBe(`/sessions/${started.id}/`);
    // The portal reaches the node where slurmctld does (the test cluster's NodeAddr is 127.0.0.1).
    const address = await port.sessionAddress!(connection!.host);
    expect(address).toBe('127.0.0.1');
    const kernels = `http://${address}:${connection!.port}${connection!.basePath}api/kernels`;
    expect((await fetch(kernels)).status).toBe(403);
    expect((await fetch(kernels, { headers: { authorization: `token ${connection!.secret}` } })).status).toBe(200);
    expect((await api.session.list()).find((s) => s.id === started.id)).toMatchObject({ state: 'RUNNING', ready: true });

    // Extended by 20 minutes: Slurm holds the new limit (raised with the service's operator token, which a
    // person's own could not), the budget holds the added time, and the app runs on.
    expect(scontrolJob(job.schedulerJobId!).TimeLimit).toBe('00:10:00');
    expect(await api.session.extend({ jobId: started.id, minutes: 20 })).toMatchObject({ walltimeSeconds: 30 * 60, reserved: 20 * 60 });
    expect(scontrolJob(job.schedulerJobId!).TimeLimit).toBe('00:30:00');
    expect((await row()).reservedAmount).toBe(30 * 60);
    expect((await api.session.get({ jobId: started.id })).state).toBe('RUNNING');

    // Through the portal's proxy, as the person's browser: Jupyter's API answers, the secret in no answer.
    const authSecret = randomBytes(32).toString('base64url');
    const proxy = createSessionProxy({ access: (request) => sessionAccess({ db, authSecret, scheduler: () => Promise.resolve(port), roots: configuredSiteRoots() }, request), touch: () => {}, trustProxy: false });
    const portal = http.createServer((req, res) => (proxy.ownsPath(req.url) ? proxy.handleRequest(req, res) : res.writeHead(404).end()));
    await new Promise<void>((resolve) => portal.listen(0, '127.0.0.1', resolve));
    try {
      const sid = await startPortalSession(db, owner.userId, { userAgent: 'slurm tier' });
      const cookie = `next-auth.session-token=${await encode({ token: { sub: owner.userId, sid, name: 'Owner', email: 'owner@example.org' }, secret: authSecret })}`;
      const viaPortal = `http://127.0.0.1:${(portal.address() as AddressInfo).port}${connection!.basePath}api/kernels`;
      const answer = await fetch(viaPortal, { headers: { cookie } });
      const body = await answer.text();
      expect(answer.status).toBe(200);
      expect(JSON.parse(body)).toEqual([]);
      expect(body + JSON.stringify([...answer.headers])).not.toContain(connection!.secret);
      // Without the portal's session: the sign-in, never the app.
      expect((await fetch(viaPortal, { redirect: 'manual' })).status).toBe(302);
    } finally {
      await proxy.close();
      portal.closeAllConnections();
      await new Promise<void>((resolve) => portal.close(() => resolve()));
    }

    // Ended: Slurm's TERM stops the launcher and its app; the job ends COMPLETED, charged what it ran.
    await api.session.end({ jobId: started.id });
    expect(await waitUntil(async () => (await reconcileOnce(db, port, now()), (await row()).settledAt !== null), 120)).toBe(true);
    const ended = await row();
    expect(ended.state).toBe('COMPLETED');
    expect(ended.gpuSeconds).toBeGreaterThan(0);
    expect(ended.chargedAmount).toBe(ended.gpuSeconds);
    // Settled on its reservation with the extension: nothing left held on the allocation.
    expect((await db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!.reserved).toBe(0);
    expect(await waitUntil(async () => fetch(kernels).then(() => false, () => true), 30)).toBe(true);
    expect(await waitUntil(async () => stat(file).then(() => false, () => true), 30)).toBe(true);
  });
});
