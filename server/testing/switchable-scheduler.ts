// A scheduler behind a switch, for outage tests: while it is off, every call fails as an unreachable
// slurmrestd does (SchedulerUnavailableError); on, it passes every call to the scheduler behind it.
import { SchedulerUnavailableError, type SchedulerPort } from '~/server/core/scheduler/port';

export function switchable(port: SchedulerPort) {
  let away = false;
  const guard = () => {
    if (away) throw new SchedulerUnavailableError('connect ECONNREFUSED 127.0.0.1:6820');
  };
  const wrapped: SchedulerPort = {
    submit: async (spec) => (guard(), port.submit(spec)),
    cancel: async (id, options) => (guard(), port.cancel(id, options)),
    jobs: async (ids) => (guard(), port.jobs(ids)),
    describeCluster: async () => (guard(), port.describeCluster()),
  };
  return { port: wrapped, set: (value: boolean) => (away = value) };
}
