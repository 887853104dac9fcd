// The facility power cap honoured live: on the simulated adapter with a low cap, a job that fits in GPUs
// waits with PowerCap until another job ends; the catalogue's powerCapKw reaches the simulated cluster's sites.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import type { SchedulerJobSpec } from '~/server/core/scheduler/port';
import { testCluster, testPartition } from '~/server/core/sim/fixtures';
import { dbTargets, openTestDb } from '~/server/testing/harness';
import { withPowerCap } from './cluster-config';
import { createSimulatedScheduler } from './simulated';

const START_MS = Date.parse('2026-12-01T08:00:00Z');
const SPEED = 60;

function job(portalJobId: string): SchedulerJobSpec {
  return {
    portalJobId,
    name: portalJobId,
    partition: 'gpu',
    gpus: 4,
    nodes: 1,
    walltimeSeconds: 3600,
    account: 'project-a',
    user: 'alice',
    image: 'pytorch:24.10',
    command: 'python train.py',
    env: {},
    simulation: { runtimeSeconds: 600, gpuUtilPercent: 80, exitCode: 0 },
  };
}

describe('catalogue power cap', () => {
  it('a site with powerCapKw gets its cap in W and its PUE; a site without one stays as it was', () => {
    const catalogue = { ...DEFAULT_CATALOGUE, sites: DEFAULT_CATALOGUE.sites.map((s) => (s.id === 'ch-lugano' ? { ...s, powerCapKw: 2.5 } : s)) };
    expect(withPowerCap({ id: 'ch-lugano', country: 'CH', eu: false }, catalogue)).toEqual({ id: 'ch-lugano', country: 'CH', eu: false, powerCapW: 2500, pueMilli: 1200 });
    expect(withPowerCap({ id: 'de-jena', country: 'DE', eu: true }, catalogue)).toEqual({ id: 'de-jena', country: 'DE', eu: true });
  });
});

describe.each(dbTargets())('simulated scheduler under a power cap on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  it('a submitted job that fits in GPUs but not under the cap waits with PowerCap, then starts when the other ends', async () => {
    // 2 nodes × 4 GPUs: idle 2 × (1,000 + 4 × 100) = 2,800 W; a 4-GPU job at 80 % adds 4 × 600 × 0.8 = 1,920 W.
    // Cap 6,000 W at PUE 1.25 ⇒ 4,800 W IT: one such job (4,720 W) runs, a second (6,640 W) must wait.
    const base = testCluster([testPartition()]);
    const cluster = { ...base, sites: base.sites.map((s) => ({ ...s, powerCapW: 6000, pueMilli: 1250 })) };
    let simSeconds = 0;
    const now = () => new Date(START_MS + Math.ceil((simSeconds * 1000) / SPEED));
    const port = createSimulatedScheduler({ db: handle.db, cluster, speed: SPEED, now, clusterId: 'powercap' });
    await port.submit(job('a'));
    await port.submit(job('b'));
    simSeconds = 1;
    await port.advance();
    const [a, b] = await port.jobs(['a', 'b']);
    expect(a).toMatchObject({ state: 'RUNNING' });
    expect(b).toMatchObject({ state: 'PENDING', pendingReason: 'PowerCap' });
    simSeconds = 700;
    await port.advance();
    const [a2, b2] = await port.jobs(['a', 'b']);
    expect(a2).toMatchObject({ state: 'COMPLETED' });
    expect(b2).toMatchObject({ state: 'RUNNING', pendingReason: null });
    expect(b2!.startedAt!.getTime()).toBeGreaterThanOrEqual(a2!.endedAt!.getTime());
  }, 120_000);

  it('a job submitted with begin waits with BeginTime, does not block the queue and starts no earlier than begin', async () => {
    let simSeconds = 0;
    const now = () => new Date(START_MS + Math.ceil((simSeconds * 1000) / SPEED));
    const port = createSimulatedScheduler({ db: handle.db, cluster: testCluster([testPartition()]), speed: SPEED, now, clusterId: 'begin' });
    // 1,000 simulated seconds ahead (+ 7 ms, not a whole simulated second: rounded up).
    const begin = new Date(START_MS + Math.ceil((1000 * 1000) / SPEED) + 7);
    await port.submit({ ...job('late'), begin });
    await port.submit(job('now'));
    simSeconds = 10;
    await port.advance();
    const [late, early] = await port.jobs(['late', 'now']);
    expect(late).toMatchObject({ state: 'PENDING', pendingReason: 'BeginTime' });
    expect(early).toMatchObject({ state: 'RUNNING' });
    simSeconds = 999;
    await port.advance();
    expect((await port.jobs(['late']))[0]).toMatchObject({ state: 'PENDING', pendingReason: 'BeginTime' });
    simSeconds = 1100;
    await port.advance();
    const [started] = await port.jobs(['late']);
    expect(started).toMatchObject({ state: 'RUNNING' });
    expect(started!.startedAt!.getTime()).toBeGreaterThanOrEqual(begin.getTime());
    expect(started!.startedAt!.getTime() - begin.getTime()).toBeLessThan(1000);
  }, 120_000);
});
