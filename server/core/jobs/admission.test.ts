import { describe, expect, it } from 'vitest';
import { admitJob, powerCapShortfall, type AdmissionInput, type SitePowerCap } from './admission';

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
  it('admits a job when no invoice is overdue beyond the policy', () => {
    expect(admitJob({ ...base, overdueInvoices: [] })).toBeNull();
  });
  it.each([
    ['a pending tenant', { tenant: { status: 'pending_verification', residency: 'any' } }, 'job.tenantPending', {}],
    ['a suspended tenant', { tenant: { status: 'suspended', residency: 'any' } }, 'job.tenantSuspended', {}],
    ['a tenant with invoices overdue beyond the policy', { overdueInvoices: ['INV-2026-000004', 'INV-2026-000007'] }, 'job.invoicesOverdue', { numbers: 'INV-2026-000004, INV-2026-000007' }],
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

  // The demo's Jena site: 16 H100 nodes, each 1,500 W base + 8 × 70 W idle = 2,060 W, so 32,960 W IT idle;
  // a GPU at 100 % adds 700 − 70 = 630 W. Cap 45 kW at PUE 1.08 ⇒ 41,666.66 W IT: (41,666.66 − 32,960) / 630 = 13.8 ⇒ 13 GPUs.
  const h100 = { gpusPerNode: 8, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1500 };
  const jena: SitePowerCap = { capW: 45_000, pueMilli: 1080, idleCentiW: 3_296_000, model: h100 };

  it('refuses a job that could never start under its site’s power cap, naming the GPUs and the most that fit', () => {
    const refusal = admitJob({ ...base, powerCap: jena, request: { gpus: 16, nodes: 2, walltimeSeconds: 3600 } });
    expect(refusal).toEqual({ code: 'BAD_REQUEST', field: 'gpus', key: 'job.overPowerCap', params: { requested: 16, capKw: 45, max: 13 } });
    expect(admitJob({ ...base, powerCap: jena })).toBeNull();
    // Below the idle draw (32,960 × 1.08 = 35,596.8 W) nothing fits.
    expect(admitJob({ ...base, powerCap: { ...jena, capW: 35_596 } })).toEqual({ code: 'BAD_REQUEST', field: 'gpus', key: 'job.overPowerCapIdle', params: { capKw: 35.596 } });
  });

  it.each([
    // gpus, cap, expected
    ['13 GPUs: 41,150 W × 1.08 = 44,442 W ≤ 45 kW', 13, jena, null],
    ['14 GPUs: 41,780 W × 1.08 = 45,122.4 W > 45 kW', 14, jena, { capKw: 45, requestedGpus: 14, maxGpus: 13 }],
    ['no cap', 128, null, null],
    ['the idle site exactly at the cap: 35,596.8 W ≤ 35,596.8 W, no GPU more', 1, { ...jena, capW: 35_596.8 }, { capKw: 35.5968, requestedGpus: 1, maxGpus: 0 }],
    ['GPUs that draw no more busy than idle', 128, { ...jena, model: { ...h100, gpuMaxPowerW: 70 } }, null],
  ] as const)('powerCapShortfall: %s', (_label, gpus, cap, expected) => {
    expect(powerCapShortfall(cap, gpus)).toEqual(expected);
  });
});
