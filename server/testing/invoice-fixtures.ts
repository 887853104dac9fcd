// Fixtures for the invoice tests: a job as the reconciler leaves it once settled, written straight
// into `jobs` so a month can be invoiced without running the scheduler.
import { randomUUID } from 'node:crypto';
import type { Db } from '~/db/client';
import { jobs } from '~/db/schema';

const H = 3600;

/** insertSettledJob writes a finished, settled 4-GPU H100 job of a tenant's credit line, ended at `endedAt` (an interactive session with `kind`). */
export async function insertSettledJob(db: Db, owner: { orgId: string; projectId: string; allocationId: string; userId: string }, job: { gpuSeconds: number; costCents: number; endedAt: string; kind?: 'training' | 'interactive' }) {
  const endedAt = new Date(job.endedAt);
  const startedAt = new Date(endedAt.getTime() - job.gpuSeconds * 250);
  await db.insert(jobs).values({
    orgId: owner.orgId,
    projectId: owner.projectId,
    allocationId: owner.allocationId,
    userId: owner.userId,
    idempotencyKey: randomUUID(),
    name: job.kind === 'interactive' ? 'jupyter-session' : 'fine-tune',
    kind: job.kind ?? 'training',
    ...(job.kind === 'interactive' ? { app: 'jupyter', idleTimeoutSeconds: 1800 } : {}),
    resourceClassId: 'h100',
    siteId: 'de-jena',
    gpus: 4,
    nodes: 1,
    walltimeSeconds: 48 * H,
    image: 'nvcr.io/nvidia/pytorch:24.05-py3',
    command: 'torchrun train.py',
    env: {},
    state: 'COMPLETED',
    reservedAmount: 100_000,
    reservedUnit: 'cents',
    centsPerGpuHour: 290,
    submittedAt: new Date(startedAt.getTime() - 60_000),
    startedAt,
    endedAt,
    gpuSeconds: job.gpuSeconds,
    costCents: job.costCents,
    chargedAmount: job.costCents,
    energyWh: 1000,
    settledAt: new Date(endedAt.getTime() + 2000),
  });
}
