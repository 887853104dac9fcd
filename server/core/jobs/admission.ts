// Admission of a job: every limit a submission must respect, checked before anything is written.
// Pure; the refusal names the limit and by how much it is exceeded. The budget itself (GPUs ×
// walltime, the monthly cap) is checked by the ledger when it reserves, in the same transaction.
import { capItCentiW, maxGpusUnderCap } from '../sim/power';

export type Residency = 'any' | 'EU' | 'DE';

export interface AdmissionInput {
  tenant: { status: 'pending_verification' | 'active' | 'suspended'; residency: Residency };
  /** The project's own data-residency need (a company project may be stricter than its tenant); null: the tenant's. */
  project?: { residency: Residency | null };
  resourceClass: { id: string; gpusPerNode: number; nodes: number; maxWalltimeSeconds: number; site: { country: string; inEu: boolean } };
  allocation: {
    status: 'active' | 'expired' | 'suspended';
    resourceClassId: string | null;
    maxGpusAtOnce: number | null;
    maxWalltimeSeconds: number | null;
    maxQueuedJobs: number | null;
  };
  /** GPUs of the allocation's jobs that are pending or running now, and how many are pending. */
  inUse: { gpus: number; queuedJobs: number };
  /** One job's (one task's) shape; `array`: a job array of `tasks` tasks, at most `throttle` running at once (null: as many as fit). */
  request: { gpus: number; nodes: number; walltimeSeconds: number; array?: { tasks: number; throttle: number | null } | null };
  /** The facility power cap of the class's site, when it has one. */
  powerCap?: SitePowerCap | null;
  /** The tenant's invoices overdue beyond the policy's days and not lifted by staff (numbers); empty or absent: none. */
  overdueInvoices?: readonly string[];
}

/** A site's facility power cap as admission needs it, with the class's GPU power. */
export interface SitePowerCap {
  capW: number;
  pueMilli: number;
  /** The site's IT draw with every node up and idle (`siteIdleCentiW`). */
  idleCentiW: number;
  /** The class's GPU and node power model. */
  model: { gpusPerNode: number; gpuIdlePowerW: number; gpuMaxPowerW: number; nodeBasePowerW: number };
}

/** A job that can never start under its site's power cap: the cap (kW), the GPUs asked for and the most that fit. */
export interface PowerCapShortfall {
  capKw: number;
  requestedGpus: number;
  maxGpus: number;
}

export type AdmissionRefusal = {
  code: 'BAD_REQUEST' | 'FORBIDDEN' | 'PRECONDITION_FAILED';
  field: 'gpus' | 'nodes' | 'walltimeMinutes' | 'resourceClassId' | 'allocationId' | 'array' | null;
  key: string;
  params: Record<string, number | string>;
};

const hours = (seconds: number) => Math.round((seconds / 3600) * 100) / 100;

/** residencyAllowsSite tells whether a tenant's residency rule lets its jobs run at a site. */
export function residencyAllowsSite(residency: Residency, site: { country: string; inEu: boolean }): boolean {
  if (residency === 'DE') return site.country === 'DE';
  if (residency === 'EU') return site.inEu;
  return true;
}

/**
 * powerCapShortfall tells whether a job can never start under its site's facility power cap: the site idle
 * with the job's GPUs at 100 % utilisation, × PUE, is over the cap (a scheduler holding power would keep it
 * waiting for ever); null when it fits or the site has no cap. 100 %: what a job draws is not known before it runs.
 */
export function powerCapShortfall(cap: SitePowerCap | null | undefined, gpus: number): PowerCapShortfall | null {
  if (!cap) return null;
  const maxGpus = maxGpusUnderCap(capItCentiW({ powerCapW: cap.capW, pueMilli: cap.pueMilli })!, cap.idleCentiW, cap.model);
  return gpus > maxGpus ? { capKw: cap.capW / 1000, requestedGpus: gpus, maxGpus } : null;
}

/** admitJob returns the first limit a job submission breaks, or null when it may be submitted. */
export function admitJob(input: AdmissionInput): AdmissionRefusal | null {
  const { tenant, resourceClass: rc, allocation: a, inUse, request: r } = input;
  if (tenant.status === 'pending_verification') return { code: 'FORBIDDEN', field: null, key: 'job.tenantPending', params: {} };
  if (tenant.status === 'suspended') return { code: 'FORBIDDEN', field: null, key: 'job.tenantSuspended', params: {} };
  if (input.overdueInvoices?.length) return { code: 'PRECONDITION_FAILED', field: null, key: 'job.invoicesOverdue', params: { numbers: input.overdueInvoices.join(', ') } };
  if (!residencyAllowsSite(tenant.residency, rc.site)) {
    return { code: 'BAD_REQUEST', field: 'resourceClassId', key: 'job.residency', params: { residency: tenant.residency, country: rc.site.country } };
  }
  const projectResidency = input.project?.residency;
  if (projectResidency && !residencyAllowsSite(projectResidency, rc.site)) {
    return { code: 'BAD_REQUEST', field: 'resourceClassId', key: 'job.projectResidency', params: { residency: projectResidency, country: rc.site.country } };
  }
  if (a.status !== 'active') return { code: 'PRECONDITION_FAILED', field: 'allocationId', key: 'job.allocationNotActive', params: { status: a.status } };
  if (a.resourceClassId !== null && a.resourceClassId !== rc.id) {
    return { code: 'BAD_REQUEST', field: 'resourceClassId', key: 'job.classNotInAllocation', params: { allocated: a.resourceClassId } };
  }
  if (r.nodes > rc.nodes) return { code: 'BAD_REQUEST', field: 'nodes', key: 'job.tooManyNodes', params: { requested: r.nodes, max: rc.nodes } };
  if (r.gpus % r.nodes !== 0) return { code: 'BAD_REQUEST', field: 'gpus', key: 'job.gpusNotDivisible', params: { gpus: r.gpus, nodes: r.nodes } };
  const perNode = r.gpus / r.nodes;
  if (perNode > rc.gpusPerNode) {
    return { code: 'BAD_REQUEST', field: 'gpus', key: 'job.tooManyGpusPerNode', params: { perNode, max: rc.gpusPerNode, minNodes: Math.ceil(r.gpus / rc.gpusPerNode) } };
  }
  const power = powerCapShortfall(input.powerCap, r.gpus);
  if (power) {
    return power.maxGpus > 0
      ? { code: 'BAD_REQUEST', field: 'gpus', key: 'job.overPowerCap', params: { requested: power.requestedGpus, capKw: power.capKw, max: power.maxGpus } }
      : { code: 'BAD_REQUEST', field: 'gpus', key: 'job.overPowerCapIdle', params: { capKw: power.capKw } };
  }
  if (r.walltimeSeconds > rc.maxWalltimeSeconds) {
    return { code: 'BAD_REQUEST', field: 'walltimeMinutes', key: 'job.walltimeOverPartition', params: { requested: hours(r.walltimeSeconds), max: hours(rc.maxWalltimeSeconds), over: hours(r.walltimeSeconds - rc.maxWalltimeSeconds) } };
  }
  if (a.maxWalltimeSeconds !== null && r.walltimeSeconds > a.maxWalltimeSeconds) {
    return { code: 'PRECONDITION_FAILED', field: 'walltimeMinutes', key: 'job.walltimeOverAllocation', params: { requested: hours(r.walltimeSeconds), max: hours(a.maxWalltimeSeconds), over: hours(r.walltimeSeconds - a.maxWalltimeSeconds) } };
  }
  if (r.array) return admitArray(a, inUse, r.gpus, r.array);
  if (a.maxGpusAtOnce !== null && inUse.gpus + r.gpus > a.maxGpusAtOnce) {
    return { code: 'PRECONDITION_FAILED', field: 'gpus', key: 'job.gpusAtOnce', params: { limit: a.maxGpusAtOnce, inUse: inUse.gpus, requested: r.gpus, over: inUse.gpus + r.gpus - a.maxGpusAtOnce } };
  }
  if (a.maxQueuedJobs !== null && inUse.queuedJobs >= a.maxQueuedJobs) {
    return { code: 'PRECONDITION_FAILED', field: null, key: 'job.queuedJobs', params: { limit: a.maxQueuedJobs } };
  }
  return null;
}

/**
 * admitArray checks a job array against the allocation's limits in flight: the GPUs its tasks may hold
 * at once (the tasks, at most its throttle, × GPUs per task) and its tasks as queued jobs. Over the GPU
 * limit, the refusal names the throttle that would fit.
 */
function admitArray(a: AdmissionInput['allocation'], inUse: AdmissionInput['inUse'], gpus: number, array: { tasks: number; throttle: number | null }): AdmissionRefusal | null {
  const atOnce = Math.min(array.tasks, array.throttle ?? array.tasks);
  if (a.maxGpusAtOnce !== null && inUse.gpus + gpus * atOnce > a.maxGpusAtOnce) {
    const fits = Math.floor((a.maxGpusAtOnce - inUse.gpus) / gpus);
    return fits >= 1
      ? { code: 'PRECONDITION_FAILED', field: 'array', key: 'job.arrayGpusAtOnce', params: { limit: a.maxGpusAtOnce, inUse: inUse.gpus, tasks: atOnce, gpus, throttle: fits } }
      : { code: 'PRECONDITION_FAILED', field: 'gpus', key: 'job.gpusAtOnce', params: { limit: a.maxGpusAtOnce, inUse: inUse.gpus, requested: gpus, over: inUse.gpus + gpus - a.maxGpusAtOnce } };
  }
  if (a.maxQueuedJobs !== null && inUse.queuedJobs + array.tasks > a.maxQueuedJobs) {
    return { code: 'PRECONDITION_FAILED', field: 'array', key: 'job.arrayQueuedJobs', params: { limit: a.maxQueuedJobs, queued: inUse.queuedJobs, tasks: array.tasks } };
  }
  return null;
}
