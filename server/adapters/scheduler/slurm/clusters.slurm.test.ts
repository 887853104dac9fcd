// Two real Slurm clusters, two sites: the test cluster's `ci` (site de-jena, class h100) and `ci2` (site
// fi-kajaani, class b200), each its own slurmctld and slurmrestd, both in one slurmdbd
// (scripts/slurm-test-cluster.sh), behind the router as SLURM_CLUSTERS builds it (server/scheduler.ts).
// With cluster 1 stopped, the job for site 2 is handed over to cluster 2 at once, runs and is settled there
// while cluster 1's job waits SUBMITTING with its reservation; once cluster 1 is back its job runs there;
// each is charged its own cluster's sacct (elapsed × GPUs). The real-Slurm twin of router.integration.test.ts.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobs, ledgerEntries } from '~/db/schema';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import type { ClusterRouter } from '~/server/adapters/scheduler/router';
import { clustersOf } from '~/server/core/scheduler/port';
import { parseEnv } from '~/server/env.js';
import { createSlurmClusterRouter } from '~/server/scheduler';
import { readClusterStatuses } from '~/server/services/cluster/scheduler-status';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { startWorker } from '~/server/worker';
import { sleep } from './testing';

const CLUSTER_1_SITE = 'de-jena';
const CLUSTER_2_SITE = 'fi-kajaani';

/** The portal's configuration with SLURM_CLUSTERS naming the test cluster's two clusters (its env file). */
function twoClusterConfig() {
  const e = process.env;
  if (!e.SLURM2_REST_URL || !e.SLURM2_CLUSTER || !e.SLURM2_PARTITIONS) {
    throw new Error('SLURM2_REST_URL, SLURM2_CLUSTER and SLURM2_PARTITIONS are not set: start the test cluster (scripts/slurm-test-cluster.sh start) and source its env file');
  }
  const clusters = [
    { cluster: e.SLURM_CLUSTER, sites: [CLUSTER_1_SITE], restUrl: e.SLURM_REST_URL, partitions: e.SLURM_PARTITIONS },
    { cluster: e.SLURM2_CLUSTER, sites: [CLUSTER_2_SITE], restUrl: e.SLURM2_REST_URL, partitions: e.SLURM2_PARTITIONS },
  ];
  // Polled every second: the test waits in real time.
  return parseEnv({ ...e, SCHEDULER: 'slurm', SLURM_POLL_SECONDS: '1', SLURM_CLUSTERS: JSON.stringify(clusters) });
}

/** The router over one Slurm adapter per cluster, as createScheduler makes it for SLURM_CLUSTERS. */
async function twoClusterRouter(db: Db): Promise<ClusterRouter> {
  return createSlurmClusterRouter(db, twoClusterConfig(), await slurmClassesFromCatalogue(db));
}

/** The test cluster script's stop-cluster / start-cluster: one cluster's slurmctld and slurmrestd. */
function clusterCommand(command: 'stop-cluster' | 'start-cluster', which: 1 | 2): void {
  const script = process.env.SLURM_TEST_SCRIPT;
  if (!script) throw new Error('SLURM_TEST_SCRIPT is not set: source the test cluster env file (scripts/slurm-test-cluster.sh env)');
  execFileSync(script, [command, String(which)], { stdio: 'pipe' });
}

/** One cluster's accounting of the jobs of this name (`sacct -M <cluster>`, allocation lines): where each ran. */
function sacctOn(cluster: string, name: string) {
  const out = execFileSync('sacct', ['-M', cluster, '-n', '-P', '-X', '-a', '-S', 'now-1days', '--name', name, '-o', 'Cluster,JobIDRaw,State,ElapsedRaw,AllocTRES%200,Partition,NodeList'], {
    encoding: 'utf8',
    env: process.env,
  });
  return out
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [clusterName, jobId, state, elapsed, tres, partition, nodes] = line.split('|');
      return { cluster: clusterName!, jobId: jobId!, state: state!.split(' ')[0]!, elapsedSeconds: Number(elapsed), gpus: Number(/gres\/gpu=(\d+)/.exec(tres ?? '')?.[1] ?? 0), partition: partition!, nodes: nodes! };
    });
}

describe('two Slurm clusters, two sites, on the test cluster (ci and ci2, one slurmdbd)', () => {
  let handle: DbHandle;
  let db: Db;
  let router: ClusterRouter;
  let cluster1: string;
  let cluster2: string;
  const now = () => new Date();
  const today = now().toISOString().slice(0, 10);

  beforeAll(async () => {
    handle = await openTestDb(dbTargets().at(-1)!); // real Postgres when the run has one
    db = handle.db;
    router = await twoClusterRouter(db);
    [cluster1, cluster2] = clustersOf(router).map((c) => c.name) as [string, string];
  });
  afterAll(async () => handle?.close());

  it("a job for site 2 runs on cluster 2 while cluster 1 is stopped; cluster 1's job waits and runs once it is back", async () => {
    expect(clustersOf(router).map((c) => [c.name, c.sites])).toEqual([
      [cluster1, [CLUSTER_1_SITE]],
      [cluster2, [CLUSTER_2_SITE]],
    ]);
    const tag = randomUUID().slice(0, 8);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Two Slurm Clusters ${tag}` });
    // Each grant makes its project's account and GPU-minute limit on the cluster that runs its class.
    const onH100 = await activeAllocation(db, owner, admin, { gpuHours: 10, today, resourceClassId: 'h100', scheduler: router });
    const onB200 = await activeAllocation(db, owner, admin, { gpuHours: 10, today, resourceClassId: 'b200', scheduler: router });
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: router });
    const asStaff = callerFor(db, { userId: admin.userId, now, scheduler: router });
    const lines: string[] = [];
    const worker = startWorker(handle, router, { reconcileMs: 3_600_000, now, mail: null, log: (l) => lines.push(l) });
    const row = async (id: string) => (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!;
    /** Worker rounds, a second apart, until the job is settled (at most maxSeconds). */
    const settle = async (id: string, maxSeconds: number) => {
      const deadline = Date.now() + maxSeconds * 1000;
      while ((await row(id)).settledAt === null && Date.now() < deadline) {
        await worker.tick();
        if ((await row(id)).settledAt === null) await sleep(1000);
      }
      return row(id);
    };
    const input = { kind: 'training' as const, nodes: 1, walltimeMinutes: 5, image: 'img', command: 'sleep 3', env: {} };
    let cluster1Stopped = false;
    try {
      // The worker's first round, with both clusters answering.
      await worker.tick();
      expect((await readClusterStatuses(db)).map((s) => [s.cluster, s.reachable])).toEqual([
        [cluster1, true],
        [cluster2, true],
      ]);

      clusterCommand('stop-cluster', 1);
      cluster1Stopped = true;
      const there = await asOwner.job.submit({ ...input, gpus: 2, allocationId: onB200.allocationId, resourceClassId: 'b200', name: 'cluster 2 job', idempotencyKey: randomUUID() });
      const waiting = await asOwner.job.submit({ ...input, gpus: 1, allocationId: onH100.allocationId, resourceClassId: 'h100', name: 'cluster 1 job', idempotencyKey: randomUUID() });
      // Cluster 2 took its job at once; cluster 1's waits, reserved, and its failed hand-over is filed under cluster 1.
      expect(there.state).toBe('PENDING');
      expect(waiting.state).toBe('SUBMITTING');
      expect((await readClusterStatuses(db)).map((s) => [s.cluster, s.reachable])).toEqual([
        [cluster1, false],
        [cluster2, true],
      ]);
      expect((await asOwner.job.get({ jobId: waiting.id })).waitingForScheduler).toBe(true);

      // The worker follows each cluster on its own: cluster 2's job runs and is settled while cluster 1 stays away.
      const ran = await settle(there.id, 90);
      expect(ran).toMatchObject({ state: 'COMPLETED', siteId: CLUSTER_2_SITE, exitCode: 0 });
      expect((await row(waiting.id)).state).toBe('SUBMITTING');
      expect((await readClusterStatuses(db)).map((s) => [s.cluster, s.reachable])).toEqual([
        [cluster1, false],
        [cluster2, true],
      ]);
      const view = await asStaff.staff.cluster();
      expect(view.clusters.map((c) => [c.name, c.reachable])).toEqual([
        [cluster1, false],
        [cluster2, true],
      ]);
      // What answered is still described: cluster 2's partition and node.
      expect(view.description!.partitions.map((p) => [p.name, p.siteId])).toEqual([['b200', CLUSTER_2_SITE]]);
      expect(view.scheduler.reachable).toBe(false);
      // It ran on cluster 2 (its slurmdbd records), under its Slurm job id there; cluster 1 never saw it.
      const [onTwo, ...moreOnTwo] = sacctOn(cluster2, there.id);
      expect(moreOnTwo).toEqual([]);
      expect(onTwo).toMatchObject({ cluster: cluster2, jobId: ran.schedulerJobId, state: 'COMPLETED', gpus: 2, partition: 'b200' });
      expect(sacctOn(cluster1, there.id)).toEqual([]);
      expect(sacctOn(cluster1, waiting.id)).toEqual([]);

      // Cluster 1 is back: its job is handed over to it (not to cluster 2), runs and is settled.
      clusterCommand('start-cluster', 1);
      cluster1Stopped = false;
      const late = await settle(waiting.id, 90);
      expect(late).toMatchObject({ state: 'COMPLETED', siteId: CLUSTER_1_SITE, exitCode: 0 });
      const [onOne, ...moreOnOne] = sacctOn(cluster1, waiting.id);
      expect(moreOnOne).toEqual([]);
      expect(onOne).toMatchObject({ cluster: cluster1, jobId: late.schedulerJobId, state: 'COMPLETED', gpus: 1 });
      expect(sacctOn(cluster2, waiting.id)).toEqual([]);
      expect((await readClusterStatuses(db)).map((s) => [s.cluster, s.reachable])).toEqual([
        [cluster1, true],
        [cluster2, true],
      ]);
      expect(lines.some((l) => new RegExp(`settled 1 finished job\\(s\\) on ${cluster2}`).test(l))).toBe(true);
      expect(lines.some((l) => new RegExp(`settled 1 finished job\\(s\\) on ${cluster1}`).test(l))).toBe(true);

      // Each is charged once, exactly its own cluster's sacct: elapsed × GPUs.
      for (const [job, record] of [
        [ran, onTwo!],
        [late, onOne!],
      ] as const) {
        expect(record.elapsedSeconds).toBeGreaterThanOrEqual(3);
        const charges = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, job.id), eq(ledgerEntries.kind, 'charge')));
        expect(charges.map((c) => c.amount)).toEqual([record.elapsedSeconds * record.gpus]);
        expect(job.gpuSeconds).toBe(record.elapsedSeconds * record.gpus);
      }
    } finally {
      worker.stop();
      // Whatever happened, cluster 1 runs again for the files after this one.
      if (cluster1Stopped) clusterCommand('start-cluster', 1);
    }
  });
});
