// The process's scheduler adapter, chosen by configuration: the simulated cluster by default.
import { inArray } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { jobs } from '~/db/schema';
import { clusterConfigFromCatalogue, slurmClassesFromCatalogue } from './adapters/scheduler/cluster-config';
import { createClusterRouter, type ClusterRouter } from './adapters/scheduler/router';
import { createSimulatedScheduler } from './adapters/scheduler/simulated';
import { createSlurmScheduler, slurmSettings } from './adapters/scheduler/slurm';
import type { SlurmClassInfo } from './adapters/scheduler/slurm/adapter';
import type { SchedulerPort } from './core/scheduler/port';
import { env, type PortalEnv } from './env.js';
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
    const classes = await slurmClassesFromCatalogue(db);
    if (!config.SLURM_CLUSTERS) return createSlurmScheduler(slurmSettings(config), classes);
    return createSlurmClusterRouter(db, config, classes);
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

/** jobSites reads the site of each portal job from its record: where the router sends it. */
export function jobSites(db: Db): (portalJobIds: string[]) => Promise<Map<string, string>> {
  return async (portalJobIds) => {
    if (portalJobIds.length === 0) return new Map();
    const rows = await db.select({ id: jobs.id, siteId: jobs.siteId }).from(jobs).where(inArray(jobs.id, portalJobIds));
    return new Map(rows.map((r) => [r.id, r.siteId]));
  };
}

/** createSlurmClusterRouter builds SLURM_CLUSTERS: one Slurm adapter per cluster (each its own metrics label), the router in front. */
export function createSlurmClusterRouter(db: Db, config: PortalEnv, classes: SlurmClassInfo[]): ClusterRouter {
  const clusters = (config.SLURM_CLUSTERS ?? []).map((c) => {
    const settings = slurmSettings({
      ...config,
      SLURM_REST_URL: c.restUrl,
      SLURM_CLUSTER: c.cluster,
      SLURM_PARTITIONS: c.partitions,
      // Its own credentials when it names them, else the shared ones.
      SLURM_REST_TOKEN_FILE: c.tokenFile ?? (c.jwtKeyFile ? undefined : config.SLURM_REST_TOKEN_FILE),
      SLURM_JWT_KEY_FILE: c.jwtKeyFile ?? (c.tokenFile ? undefined : config.SLURM_JWT_KEY_FILE),
    });
    return { name: c.cluster, sites: c.sites, classes: Object.keys(c.partitions), port: instrumentScheduler(createSlurmScheduler(settings, classes), `slurm:${c.cluster}`) };
  });
  return createClusterRouter({ clusters, siteOf: jobSites(db) });
}
