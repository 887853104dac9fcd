// The process's scheduler adapter, chosen by configuration: the simulated cluster by default.
import type { Db } from '~/db/client';
import { clusterConfigFromCatalogue } from './adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from './adapters/scheduler/simulated';
import type { SchedulerPort } from './core/scheduler/port';
import { env } from './env.js';

const state: { promise?: Promise<SchedulerPort> } = ((globalThis as { __portalScheduler?: { promise?: Promise<SchedulerPort> } }).__portalScheduler ??= {});

/** getScheduler returns the configured scheduler adapter, created once per process. */
export function getScheduler(db: Db): Promise<SchedulerPort> {
  state.promise ??= (async () => {
    const config = env();
    if (config.SCHEDULER === 'slurm') {
      throw new Error('SCHEDULER=slurm: the Slurm adapter is not part of this version yet; use SCHEDULER=simulated.');
    }
    const cluster = await clusterConfigFromCatalogue(db);
    return createSimulatedScheduler({
      db,
      cluster,
      speed: config.SIM_SPEED,
      now: () => new Date(),
      nodeFailures: config.SIM_NODE_MTBF_HOURS > 0 ? { mtbfSeconds: config.SIM_NODE_MTBF_HOURS * 3600, repairSeconds: config.SIM_NODE_REPAIR_HOURS * 3600 } : null,
    });
  })().catch((error: unknown) => {
    state.promise = undefined;
    throw error;
  });
  return state.promise;
}

/**
 * setScheduler makes `port` the process's scheduler adapter, so that the API uses it (a benchmark
 * driving the routers with an adapter of its own); undefined goes back to the configured one.
 */
export function setScheduler(port: SchedulerPort | undefined): void {
  state.promise = port ? Promise.resolve(port) : undefined;
}
