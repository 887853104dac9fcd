// Starting a tenant's model service on the simulated cluster for the gateway's tests (issue #29): the
// service is submitted through the API as a person would, the reconciler is stepped with the test's clock
// until the cluster started its model server, which is when the server wrote its connection file.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Db } from '~/db/client';
import type { SimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { connectionFileOf } from '~/server/adapters/scheduler/simulated-services';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { jobDirOf, workspaceOf } from '~/server/services/files/workspace';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { callerFor } from './harness';

export interface ModelServiceOptions {
  db: Db;
  scheduler: SimulatedScheduler;
  owner: { userId: string; orgId: string };
  /** The allocation that runs the service and its project. */
  on: { allocationId: string; projectId: string };
  model: string;
  name?: string;
  where?: { resourceClassId: string; siteId: string };
  /** The test's clock: `now` reads it, `tick` moves it on a second and returns the new time. */
  now: () => Date;
  tick: () => Date;
}

/** startModelService submits an inference service and waits (20 s at most) until its model server listens; returns its job and the server's pid. */
export async function startModelService(o: ModelServiceOptions): Promise<{ jobId: string; pid: number }> {
  const where = o.where ?? { resourceClassId: 'h100', siteId: 'de-jena' };
  const job = await callerFor(o.db, { userId: o.owner.userId, orgId: o.owner.orgId, scheduler: o.scheduler, now: o.now }).job.submit({
    allocationId: o.on.allocationId,
    resourceClassId: where.resourceClassId,
    name: o.name ?? 'model service',
    kind: 'inference',
    servedModel: o.model,
    gpus: 1,
    nodes: 1,
    walltimeMinutes: 600,
    image: 'vllm/vllm-openai:v0.6.3',
    command: `vllm serve ${o.model}`,
    env: {},
    idempotencyKey: randomUUID(),
  });
  return { jobId: job.id, pid: await waitForModelServer({ ...o, jobId: job.id, siteId: where.siteId, projectId: o.on.projectId }) };
}

/** waitForModelServer steps the reconciler (20 s at most) until a service's model server wrote its connection file; returns the server's pid. */
export async function waitForModelServer(o: Pick<ModelServiceOptions, 'db' | 'scheduler' | 'tick'> & { jobId: string; siteId: string; projectId: string }): Promise<number> {
  const file = connectionFileOf(jobDirOf(workspaceOf(configuredSiteRoots(), o.siteId, o.projectId), o.jobId));
  for (const deadline = Date.now() + 20_000; ; ) {
    await reconcileOnce(o.db, o.scheduler, o.tick());
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text) return (JSON.parse(text) as { pid: number }).pid;
    if (Date.now() > deadline) throw new Error(`the model server of ${o.jobId} wrote no connection file within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
