// Two clusters, two sites, behind the router: each job goes to the cluster of its site; with one cluster
// down the other's jobs are still handed over, run and settled, the down cluster's wait with their
// reservation and go once it is back; staff see each cluster's state; the worker follows each on its own.
// On PGlite and real Postgres, with two simulated clusters.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { jobs } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { clusterNameOf, clustersOf } from '~/server/core/scheduler/port';
import { readClusterStatuses } from '~/server/services/cluster/scheduler-status';
import { switchable } from '~/server/testing/switchable-scheduler';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { jobSites } from '~/server/scheduler';
import { startWorker } from '~/server/worker';
import { createClusterRouter } from './router';

describe.each(dbTargets())('two clusters, two sites, on %s', (target) => {
  let handle: DbHandle;
  let clock = Date.UTC(2026, 11, 1, 9);
  const now = () => new Date(clock);

  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  it("a job for site 2 runs on cluster 2 while cluster 1 is stopped; cluster 1's job waits and runs once it is back", { timeout: 120_000 }, async () => {
    const db = handle.db;
    const config = await clusterConfigFromCatalogue(db);
    const ofSite = (site: string) => ({ sites: config.sites.filter((s) => s.id === site), partitions: config.partitions.filter((p) => p.siteId === site) });
    const tag = randomUUID().slice(0, 8);
    const jena = switchable(createSimulatedScheduler({ db, cluster: ofSite('de-jena'), speed: 60, now, clusterId: `jena-${tag}` }));
    const kajaani = createSimulatedScheduler({ db, cluster: ofSite('fi-kajaani'), speed: 60, now, clusterId: `kajaani-${tag}` });
    const router = createClusterRouter({
      clusters: [
        { name: 'jena', sites: ['de-jena'], classes: ['h100'], port: jena.port },
        { name: 'kajaani', sites: ['fi-kajaani'], classes: ['b200'], port: kajaani },
      ],
      siteOf: jobSites(db),
    });
    expect(clustersOf(router).map((c) => [c.name, c.sites])).toEqual([
      ['jena', ['de-jena']],
      ['kajaani', ['fi-kajaani']],
    ]);
    expect(clusterNameOf(clustersOf(router)[1]!.port, null)).toBe('kajaani');

    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Two Sites Lab ${tag}` });
    const today = now().toISOString().slice(0, 10);
    const onH100 = await activeAllocation(db, owner, admin, { gpuHours: 100, today, resourceClassId: 'h100' });
    const onB200 = await activeAllocation(db, owner, admin, { gpuHours: 100, today, resourceClassId: 'b200' });
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: router });
    const asStaff = callerFor(db, { userId: admin.userId, now, scheduler: router });
    const lines: string[] = [];
    const worker = startWorker(handle, router, { reconcileMs: 3_600_000, now, log: (l) => lines.push(l), mail: null });
    const row = async (id: string) => (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!;
    const input = { kind: 'training' as const, gpus: 1, nodes: 1, walltimeMinutes: 30, image: 'img', command: 'run', env: {} };
    try {
      // The worker's first round, with both clusters answering.
      await worker.tick();
      expect((await readClusterStatuses(db)).map((s) => [s.cluster, s.reachable])).toEqual([
        ['jena', true],
        ['kajaani', true],
      ]);
      jena.set(true);
      const there = await asOwner.job.submit({ ...input, allocationId: onB200.allocationId, resourceClassId: 'b200', name: 'kajaani job', idempotencyKey: randomUUID() });
      const waiting = await asOwner.job.submit({ ...input, allocationId: onH100.allocationId, resourceClassId: 'h100', name: 'jena job', idempotencyKey: randomUUID() });
      // Cluster 2 took its job at once; cluster 1's waits, reserved, and its failed hand-over is filed under cluster 1.
      expect(there.state).toBe('PENDING');
      expect(waiting.state).toBe('SUBMITTING');
      expect((await readClusterStatuses(db)).map((s) => [s.cluster, s.reachable])).toEqual([
        ['jena', false],
        ['kajaani', true],
      ]);
      expect((await kajaani.jobs([there.id])).map((s) => s.portalJobId)).toEqual([there.id]);

      // The worker follows each cluster on its own: cluster 2's job runs and is settled while cluster 1 stays away.
      for (let i = 0; i < 40 && (await row(there.id)).settledAt === null; i++) {
        await worker.tick();
        clock += 60_000;
      }
      expect(await row(there.id)).toMatchObject({ state: 'COMPLETED', siteId: 'fi-kajaani' });
      expect((await row(waiting.id)).state).toBe('SUBMITTING');
      expect((await readClusterStatuses(db)).map((s) => [s.cluster, s.reachable])).toEqual([
        ['jena', false],
        ['kajaani', true],
      ]);
      const view = await asStaff.staff.cluster();
      expect(view.clusters.map((c) => [c.name, c.reachable])).toEqual([
        ['jena', false],
        ['kajaani', true],
      ]);
      expect(view.clusters[0]!.error).toMatch(/ECONNREFUSED/);
      // What answered is still described: cluster 2's partition.
      expect(view.description!.partitions.map((p) => p.name)).toEqual(['b200']);
      expect(view.scheduler.reachable).toBe(false);

      // Cluster 1 is back: its job is handed over to it (not to cluster 2), runs and is settled.
      jena.set(false);
      for (let i = 0; i < 40 && (await row(waiting.id)).settledAt === null; i++) {
        await worker.tick();
        clock += 60_000;
      }
      expect(await row(waiting.id)).toMatchObject({ state: 'COMPLETED', siteId: 'de-jena' });
      expect(await kajaani.jobs([waiting.id])).toEqual([]);
      expect((await readClusterStatuses(db)).every((s) => s.reachable)).toBe(true);
      expect(lines.some((l) => /settled 1 finished job\(s\) on kajaani/.test(l))).toBe(true);
    } finally {
      worker.stop();
    }
  });
});
