// The process's scheduler adapter, chosen by configuration: the simulated cluster by default.
import type { Db } from '~/db/client';
import { clusterConfigFromCatalogue, slurmClassesFromCatalogue } from './adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from './adapters/scheduler/simulated';
import { createSlurmScheduler, slurmSettings } from './adapters/scheduler/slurm';
import type { SchedulerPort } from './core/scheduler/port';
import { env } from './env.js';
import { instrumentScheduler } from './observability/scheduler';

const state: { promise?: Promise<SchedulerPort> } = ((globalThis as { __portalScheduler?: { promise?: Promise<SchedulerPort> } }).__portalScheduler ??= {});

/** getScheduler returns the configured scheduler adapter, created once per process. */
export function getScheduler(db: Db): Promise<SchedulerPort> {
  // Every call is timed for /api/metrics (server/observability/scheduler.ts).
  state.promise ??= (async () => instrumentScheduler(await createScheduler(db), env().SCHEDULER))().catch((error: unknown) => {
    state.promise = undefined;
    throw error;
  });
  return state.promise;
}

/** createScheduler builds the adapter the configuration names. */
async function createScheduler(db: Db): Promise<SchedulerPort> {
  const config = env();
  if (config.SCHEDULER === 'slurm') {
    // The resource classes' power model and site come from the catalogue; Slurm says how many nodes there are.
    return createSlurmScheduler(slurmSettings(config), await slurmClassesFromCatalogue(db));
  }
  const cluster = await clusterConfigFromCatalogue(db);
  return createSimulatedScheduler({
    db,
    cluster,
    speed: config.SIM_SPEED,
    now: () => new Date(),
    nodeFailures: config.SIM_NODE_MTBF_HOURS > 0 ? { mtbfSeconds: config.SIM_NODE_MTBF_HOURS * 3600, repairSeconds: config.SIM_NODE_REPAIR_HOURS * 3600 } : null,
  });
}
