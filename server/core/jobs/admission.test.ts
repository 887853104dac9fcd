import { describe, expect, it } from 'vitest';
import { admitJob, type AdmissionInput } from './admission';

const base: AdmissionInput = {
  tenant: { status: 'active', residency: 'any' },
  resourceClass: { id: 'h100', gpusPerNode: 8, nodes: 16, maxWalltimeSeconds: 48 * 3600, site: { country: 'DE', inEu: true } },
  allocation: { status: 'active', resourceClassId: 'h100', maxGpusAtOnce: 32, maxWalltimeSeconds: 24 * 3600, maxQueuedJobs: 3 },
  inUse: { gpus: 16, queuedJobs: 1 },
  request: { gpus: 8, nodes: 1, walltimeSeconds: 3600 },
};

describe('admitJob', () => {
  it('admits a job within every limit', () => {
    expect(admitJob(base)).toBeNull();
  });
  it.each([
    ['a pending tenant', { tenant: { status: 'pending_verification', residency: 'any' } }, 'job.tenantPending', {}],
    ['a suspended tenant', { tenant: { status: 'suspended', residency: 'any' } }, 'job.tenantSuspended', {}],
    ['a site outside the residency', { tenant: { status: 'active', residency: 'DE' }, resourceClass: { ...base.resourceClass, site: { country: 'FI', inEu: true } } }, 'job.residency', { residency: 'DE', country: 'FI' }],
    ['a site outside the project’s residency need', { project: { residency: 'DE' }, resourceClass: { ...base.resourceClass, site: { country: 'FI', inEu: true } } }, 'job.projectResidency', { residency: 'DE', country: 'FI' }],
    ['another resource class', { resourceClass: { ...base.resourceClass, id: 'b200' } }, 'job.classNotInAllocation', { allocated: 'h100' }],
    ['more nodes than the partition', { request: { gpus: 136, nodes: 17, walltimeSeconds: 3600 } }, 'job.tooManyNodes', { requested: 17, max: 16 }],
    ['GPUs not divisible by nodes', { request: { gpus: 9, nodes: 2, walltimeSeconds: 3600 } }, 'job.gpusNotDivisible', { gpus: 9, nodes: 2 }],
    ['more GPUs per node than a node has', { request: { gpus: 12, nodes: 1, walltimeSeconds: 3600 } }, 'job.tooManyGpusPerNode', { perNode: 12, max: 8, minNodes: 2 }],
    ['walltime over the partition limit', { request: { gpus: 8, nodes: 1, walltimeSeconds: 50 * 3600 } }, 'job.walltimeOverPartition', { requested: 50, max: 48, over: 2 }],
    ['walltime over the allocation limit', { request: { gpus: 8, nodes: 1, walltimeSeconds: 30 * 3600 } }, 'job.walltimeOverAllocation', { requested: 30, max: 24, over: 6 }],
    ['too many GPUs at once', { request: { gpus: 24, nodes: 3, walltimeSeconds: 3600 } }, 'job.gpusAtOnce', { limit: 32, inUse: 16, requested: 24, over: 8 }],
    ['too many queued jobs', { inUse: { gpus: 0, queuedJobs: 3 } }, 'job.queuedJobs', { limit: 3 }],
  ] as const)('refuses %s, saying by how much', (_label, override, key, params) => {
    const refusal = admitJob({ ...base, ...override });
    expect(refusal?.key).toBe(key);
    expect(refusal?.params).toEqual(params);
  });
});
