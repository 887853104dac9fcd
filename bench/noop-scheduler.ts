// A scheduler that does nothing: the baseline of the submission benchmark, so the cost of the portal's
// own submit path can be told apart from the cost of the scheduler adapter behind it.
import type { ClusterDescription, SchedulerJobStatus, SchedulerPort } from '~/server/core/scheduler/port';

/** createNoopScheduler returns a SchedulerPort that accepts every job and reports it PENDING for ever. */
export function createNoopScheduler(now: () => Date = () => new Date()): SchedulerPort {
  const known = new Map<string, string>();
  return {
    submit(spec) {
      let id = known.get(spec.portalJobId);
      if (id === undefined) {
        id = `noop-${known.size + 1}`;
        known.set(spec.portalJobId, id);
      }
      return Promise.resolve({ schedulerJobId: id });
    },
    cancel() {
      return Promise.resolve();
    },
    jobs(portalJobIds) {
      const statuses: SchedulerJobStatus[] = [];
      for (const portalJobId of portalJobIds) {
        const schedulerJobId = known.get(portalJobId);
        if (schedulerJobId === undefined) continue;
        statuses.push({ portalJobId, schedulerJobId, state: 'PENDING', pendingReason: 'Priority', startedAt: null, endedAt: null, exitCode: null, signal: null, nodeList: [], gpuSeconds: 0, energyWh: 0, energyMeasured: false, siteId: null });
      }
      return Promise.resolve(statuses);
    },
    describeCluster(): Promise<ClusterDescription> {
      return Promise.resolve({ at: now(), partitions: [], nodes: [], pendingJobs: known.size, runningJobs: 0, powerW: 0 });
    },
  };
}
