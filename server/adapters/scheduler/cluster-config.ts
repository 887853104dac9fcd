// The simulated cluster's machine, built from the resource catalogue in the database: one partition
// per active resource class (named by its id), one site per catalogue site.
import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { resourceClasses, sites } from '~/db/schema';
import { configuredCatalogue, sitePowerCapW, type Catalogue } from '~/server/catalogue';
import type { ClusterConfig, Partition, Site } from '~/server/core/sim';
import type { SlurmClassInfo } from './slurm/adapter';

/** Documented default: CPU cores per GPU node (the catalogue does not describe CPUs). */
export const DEFAULT_CPUS_PER_NODE = 96;
/** Documented default: memory per GPU node in GB (the catalogue does not describe memory). */
export const DEFAULT_MEMORY_GB_PER_NODE = 1536;

/** clusterConfigFromCatalogue builds the simulator's ClusterConfig: partitions from the active resource classes, sites from the sites table. */
export async function clusterConfigFromCatalogue(db: DbOrTx): Promise<ClusterConfig> {
  // One query after the other: on a transaction (or PGlite) there is a single connection anyway.
  const siteRows = await db.select({ id: sites.id, country: sites.country, inEu: sites.inEu }).from(sites).orderBy(asc(sites.id));
  const classRows = await db.select().from(resourceClasses).where(eq(resourceClasses.active, true)).orderBy(asc(resourceClasses.id));
  const siteList: Site[] = siteRows.map((s) => withPowerCap({ id: s.id, country: s.country, eu: s.inEu }));
  const partitions: Partition[] = classRows.map((rc) => ({
    name: rc.id,
    siteId: rc.siteId,
    nodes: rc.nodes,
    gpusPerNode: rc.gpusPerNode,
    gpuModel: rc.gpuModel,
    cpusPerNode: DEFAULT_CPUS_PER_NODE,
    memoryGbPerNode: DEFAULT_MEMORY_GB_PER_NODE,
    gpuIdlePowerW: rc.gpuIdlePowerW,
    gpuMaxPowerW: rc.gpuMaxPowerW,
    nodeBasePowerW: rc.nodeBasePowerW,
    maxWalltimeSeconds: rc.maxWalltimeSeconds,
  }));
  return { sites: siteList, partitions };
}

// The cap is read from the catalogue at run time, not from the sites table; a site without one stays exactly as before.
/** withPowerCap adds the catalogue's facility power cap (kW → W) and the site's PUE to a site that has a cap. */
export function withPowerCap(site: Site, catalogue: Catalogue = configuredCatalogue()): Site {
  const capW = sitePowerCapW(catalogue, site.id);
  if (capW === null) return site;
  return { ...site, powerCapW: capW, pueMilli: catalogue.sites.find((s) => s.id === site.id)!.pueMilli };
}

/** slurmClassesFromCatalogue gives the Slurm adapter each resource class's site and power model (Slurm itself says how many nodes there are). */
export async function slurmClassesFromCatalogue(db: DbOrTx): Promise<SlurmClassInfo[]> {
  const rows = await db.select().from(resourceClasses).orderBy(asc(resourceClasses.id));
  // The Slurm options live in the configured catalogue only (no column): what the class asks Slurm for.
  const slurmOf = new Map(configuredCatalogue().resourceClasses.map((rc) => [rc.id, rc.slurm]));
  return rows.map((rc) => {
    const slurm = slurmOf.get(rc.id);
    return { id: rc.id, siteId: rc.siteId, gpuModel: rc.gpuModel, gpusPerNode: rc.gpusPerNode, maxWalltimeSeconds: rc.maxWalltimeSeconds, gpuIdlePowerW: rc.gpuIdlePowerW, gpuMaxPowerW: rc.gpuMaxPowerW, nodeBasePowerW: rc.nodeBasePowerW, ...(slurm ? { slurm } : {}) };
  });
}
