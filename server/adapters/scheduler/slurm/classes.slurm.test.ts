// Resource classes as centres define them, on a real Slurm: a class is a partition plus the catalogue's
// QoS, GPU type (typed GRES gpu:<type>:<n>), node feature constraint and reservation. The test cluster
// has two GPU types (n1 h100 with the feature nvlink, n2 b200), each also in a partition of its own.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { isSchedulerRefused, type SchedulerJobSpec } from '~/server/core/scheduler/port';
import { createSlurmScheduler } from './index';
import { catalogueClasses, scontrolJob, testClusterSettings, waitUntil } from './testing';

const RESERVATION = `portal-test-${randomUUID().slice(0, 6)}`;

function spec(partition: string, gpus: number): SchedulerJobSpec {
  return { portalJobId: `classes-${randomUUID()}`, name: 'classes', partition, gpus, nodes: 1, walltimeSeconds: 120, account: 'contract-account', user: 'portal', image: 'img', command: 'sleep 1', env: {} };
}

describe('resource classes as partition + QoS + typed GRES + constraint + reservation, on a real Slurm', () => {
  const base = catalogueClasses();
  const withSlurm = (id: string, slurm: NonNullable<(typeof base)[number]['slurm']>) => base.map((c) => (c.id === id ? { ...c, slurm } : c));
  afterAll(() => {
    spawnSync('scontrol', ['delete', `reservationname=${RESERVATION}`], { env: process.env });
  });

  it('a class asks for its GPU type, QoS and node feature, and runs only where they are', async () => {
    const port = createSlurmScheduler(testClusterSettings({ partitions: { h100: 'gpu' } }), withSlurm('h100', { gpuType: 'h100', qos: 'normal', constraint: 'nvlink' }));
    const typed = spec('h100', 4);
    const { schedulerJobId } = await port.submit(typed);
    const job = scontrolJob(schedulerJobId);
    expect(job.QOS).toBe('normal');
    expect(job.Features).toBe('nvlink');
    expect(job.TresPerNode).toBe('gres:gpu:h100:4');
    expect(await waitUntil(async () => (await port.jobs([typed.portalJobId]))[0]?.state === 'COMPLETED', 90)).toBe(true);
    const [done] = await port.jobs([typed.portalJobId]);
    // Only n1 has h100 GPUs; the charge counts them as GPUs like an untyped request.
    expect(done).toMatchObject({ nodeList: ['n1'], state: 'COMPLETED' });
    expect(done!.gpuSeconds).toBeGreaterThan(0);
    expect(done!.gpuSeconds % 4).toBe(0);

    // The other type, in the partition of its own nodes.
    const other = createSlurmScheduler(testClusterSettings({ partitions: { b200: 'b200' } }), withSlurm('b200', { gpuType: 'b200' }));
    const b = spec('b200', 2);
    await other.submit(b);
    expect(await waitUntil(async () => (await other.jobs([b.portalJobId]))[0]?.state === 'COMPLETED', 90)).toBe(true);
    expect((await other.jobs([b.portalJobId]))[0]).toMatchObject({ nodeList: ['n2'] });
  });

  it('a class with a reservation runs inside it; one with a reservation or node feature Slurm does not know is refused for good', async () => {
    execFileSync('scontrol', ['create', 'reservation', `reservationname=${RESERVATION}`, 'users=portal', 'nodes=n2', 'starttime=now', 'duration=30', 'flags=ignore_jobs'], { env: process.env });
    const port = createSlurmScheduler(testClusterSettings({ partitions: { b200: 'b200' } }), withSlurm('b200', { gpuType: 'b200', reservation: RESERVATION }));
    const reserved = spec('b200', 1);
    const { schedulerJobId } = await port.submit(reserved);
    expect(scontrolJob(schedulerJobId).Reservation).toBe(RESERVATION);
    expect(await waitUntil(async () => (await port.jobs([reserved.portalJobId]))[0]?.state === 'COMPLETED', 90)).toBe(true);

    // (An unknown QoS is refused only where slurm.conf's AccountingStorageEnforce includes qos; the test cluster's does not.)
    for (const slurm of [{ reservation: 'no-such-reservation' }, { constraint: 'no-such-feature' }]) {
      const wrong = createSlurmScheduler(testClusterSettings({ partitions: { b200: 'b200' } }), withSlurm('b200', slurm));
      const error = await wrong.submit(spec('b200', 1)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isSchedulerRefused(error), `${JSON.stringify(slurm)}: ${String(error)}`).toBe(true);
    }
  });
});
