// Interactive sessions on the simulated cluster (issue #28), on PGlite and Postgres: a Jupyter session
// started through the API runs the real launcher on this machine when the job starts; its connection
// file appears in the job's folder and the app answers with the secret (only with it); the session ends
// after its idle time-out on the cluster's clock, is charged like any job, and its app is stopped.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobEvents, jobs } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { runningSessions } from '~/server/adapters/scheduler/simulated-sessions';
import { activeAllocation, callerFor, refusal, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { folderArchiveResponse } from '~/server/services/files/download';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { connectionFile } from './sessions';

const SITE = 'de-jena';


async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.each(dbTargets())('interactive sessions on %s', (target) => {
  let handle: DbHandle;
  let db: Db;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  it('refuses an app the centre does not offer, and a session on more GPUs than one node has, naming the field', async () => {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => new Date('2026-12-01T12:00:00Z') });
    const base = { allocationId, resourceClassId: 'h100', gpus: 1, walltimeMinutes: 60, idleTimeoutMinutes: 30, idempotencyKey: randomUUID() };
    expect(await refusal(api.session.start({ ...base, app: 'rstudio' as 'jupyter' }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await refusal(api.session.start({ ...base, app: 'jupyter', idleTimeoutMinutes: 1 }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await refusal(api.session.start({ ...base, app: 'jupyter', gpus: 16 }))).toMatchObject({ code: 'BAD_REQUEST', field: 'gpus' });
    // A batch job cannot be made interactive through the job form's procedure.
    expect(await refusal(api.job.submit({ allocationId, resourceClassId: 'h100', name: 'x', kind: 'interactive' as 'batch', gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'x', command: 'x', env: {}, idempotencyKey: randomUUID() }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await db.select().from(jobs).where(eq(jobs.allocationId, allocationId))).toEqual([]);
  });

  it('runs Jupyter on this machine while the job runs, ends it after the idle time-out and charges the time it ran', { timeout: 180_000 }, async () => {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const { allocationId, projectId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    let now = new Date('2026-12-01T12:00:00Z');
    const scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 60, now: () => now, clusterId: `sessions-${randomUUID().slice(0, 8)}` });
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });
    const started = await api.session.start({ allocationId, resourceClassId: 'h100', app: 'jupyter', gpus: 1, walltimeMinutes: 240, idleTimeoutMinutes: 30, idempotencyKey: randomUUID() });
    expect(started.url).toBe(`/sessions/${started.id}/`);
    const step = async (seconds: number) => {
      now = new Date(now.getTime() + seconds * 1000);
      await reconcileOnce(db, scheduler, now);
    };
    await step(1);
    await step(2);
    expect((await db.select({ state: jobs.state }).from(jobs).where(eq(jobs.id, started.id)))[0]!.state).toBe('RUNNING');
    expect(runningSessions()).toContain(started.id);

    // The launcher writes the connection file once Jupyter answers; only the portal's user can read it.
    const file = connectionFile(configuredSiteRoots(), { id: started.id, siteId: SITE, projectId });
    const connection = await waitFor('connection.json', async () => JSON.parse(await fs.readFile(file, 'utf8').catch(() => 'null')) as { host: string; port: number; secret: string; basePath: string } | null);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    const [row] = await db.select({ nodeList: jobs.nodeList }).from(jobs).where(eq(jobs.id, started.id));
    expect(row!.nodeList).toContain(connection.host);
    expect(connection.basePath).toBe(`/sessions/${started.id}/`);
    expect(connection.secret).toMatch(/^[A-Za-z0-9_-]{32,128}$/);
    const kernels = `http://127.0.0.1:${connection.port}${connection.basePath}api/kernels`;
    expect((await fetch(kernels)).status).toBe(403);
    expect((await fetch(kernels, { headers: { authorization: `token ${connection.secret}` } })).status).toBe(200);
    const listed = await api.session.list();
    expect(listed.find((s) => s.id === started.id)).toMatchObject({ state: 'RUNNING', app: 'jupyter', appName: 'Jupyter Notebook', ready: true, url: started.url });
    // The files pages never show or serve the connection folder: not in the job's folder, not by its path, not in the archive.
    const folder = await api.files.jobFolder({ jobId: started.id });
    expect(folder.listing.entries.map((e) => e.name)).not.toContain('.portal-session');
    expect(await refusal(api.files.stat({ projectId, site: SITE, path: `jobs/${started.id}/.portal-session/connection.json` }))).toMatchObject({ code: 'BAD_REQUEST', field: 'path' });
    expect(await refusal(api.files.list({ projectId, site: SITE, path: `jobs/${started.id}/.portal-session` }))).toMatchObject({ code: 'BAD_REQUEST', field: 'path' });
    await api.files.move({ projectId, site: SITE, from: `jobs/${started.id}`, to: 'moved-session' });
    expect((await api.files.list({ projectId, site: SITE, path: 'moved-session' })).entries.map((e) => e.name)).not.toContain('.portal-session');
    await api.files.move({ projectId, site: SITE, from: 'moved-session', to: `jobs/${started.id}` });
    const archive = folderArchiveResponse(new Request('http://portal.test/x'), { path: path.dirname(path.dirname(file)), name: started.id });
    const tar = Buffer.from(await archive.arrayBuffer());
    // Each entry's header (a 512-byte block marked ustar): none names the connection folder.
    const names: string[] = [];
    for (let at = 0; at + 512 <= tar.length; at += 512) if (tar.subarray(at + 257, at + 262).toString() === 'ustar') names.push(tar.subarray(at, at + 100).toString().replace(/\0.*$/s, ''));
    expect(names.length).toBeGreaterThan(2);
    expect(names.filter((n) => n.includes('.portal-session'))).toEqual([]);
    expect(tar.includes(Buffer.from(connection.secret))).toBe(false);

    // Traffic keeps it: seen 20 cluster-minutes ago (20 s of wall time at 60×), it runs on.
    await db.update(jobs).set({ sessionSeenAt: new Date(now.getTime() - 20_000) }).where(eq(jobs.id, started.id));
    await step(1);
    expect((await db.select({ cancel: jobs.cancelRequestedAt }).from(jobs).where(eq(jobs.id, started.id)))[0]!.cancel).toBeNull();
    // 31 cluster-minutes without traffic: stopped, ended COMPLETED and settled; its app is gone.
    await step(15);
    const ended = await waitFor('the session to be settled', async () => {
      await step(1);
      const [job] = await db.select().from(jobs).where(eq(jobs.id, started.id));
      return job!.settledAt ? job : null;
    });
    expect(ended.state).toBe('COMPLETED');
    expect(ended.gpuSeconds).toBeGreaterThan(0);
    expect(ended.chargedAmount).toBe(ended.gpuSeconds);
    const events = await db.select({ message: jobEvents.message }).from(jobEvents).where(eq(jobEvents.jobId, started.id));
    expect(events.map((e) => e.message)).toContain('job.event.sessionIdle');
    expect(runningSessions()).not.toContain(started.id);
    await waitFor('Jupyter to stop', async () => (await fetch(kernels).then(() => false).catch(() => true)) || null, 30_000);
    await waitFor('the connection file to be removed', async () => (await fs.stat(file).then(() => false).catch(() => true)) || null, 30_000);
  });
});
