// A scheduler port whose answers the test writes: a submitted job is PENDING until the test sets what
// the scheduler reports for it next; `setDown(true)` makes it unreachable, as an outage would.
import { SchedulerUnavailableError, type SchedulerJobStatus, type SchedulerPort } from '~/server/core/scheduler/port';

export function scriptedScheduler() {
  const statuses = new Map<string, SchedulerJobStatus>();
  let down = false;
  const unreachable = () => Promise.reject(new SchedulerUnavailableError('down for the test'));
  const port: SchedulerPort = {
    submit: (spec) => {
      if (down) return unreachable();
      const schedulerJobId = spec.portalJobId.slice(0, 8);
      statuses.set(spec.portalJobId, { portalJobId: spec.portalJobId, schedulerJobId, state: 'PENDING', pendingReason: 'Priority', startedAt: null, endedAt: null, exitCode: null, signal: null, nodeList: [], gpuSeconds: 0, energyWh: 0, energyMeasured: false, siteId: 'de-jena' });
      return Promise.resolve({ schedulerJobId });
    },
    cancel: () => (down ? unreachable() : Promise.resolve()),
    jobs: (ids) => (down ? unreachable() : Promise.resolve(ids.flatMap((id) => statuses.get(id) ?? []))),
    describeCluster: () => Promise.resolve({ at: new Date(), partitions: [], nodes: [], pendingJobs: 0, runningJobs: 0, powerW: 0 }),
  };
  return {
    port,
    setDown: (value: boolean) => void (down = value),
    /** set changes what the scheduler reports for a job it has. */
    set: (id: string, change: Partial<SchedulerJobStatus>) => void statuses.set(id, { ...statuses.get(id)!, ...change }),
  };
}
