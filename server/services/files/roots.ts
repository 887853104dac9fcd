// Where each site's project workspaces lie: the catalogue's `filesystemRoot`, else (a real Slurm)
// SLURM_JOB_DIR, else the embedded default, a folder under the portal's data directory.
import path from 'node:path';
import { configuredCatalogue } from '~/server/catalogue';
import { env } from '~/server/env.js';
import type { SiteRoots } from './workspace';

/** configuredSiteRoots is the process's SiteRoots, from the catalogue and the environment. */
export function configuredSiteRoots(): SiteRoots {
  return {
    rootOf(siteId) {
      const site = configuredCatalogue().sites.find((s) => s.id === siteId);
      if (!site) throw new Error(`no site ${siteId} in the catalogue`);
      if (site.filesystemRoot) return site.filesystemRoot;
      const config = env();
      if (config.SCHEDULER === 'slurm') return path.resolve(config.SLURM_JOB_DIR);
      return path.resolve(config.PORTAL_FILES_DIR ?? path.join(config.PORTAL_DATA_DIR, 'files'), siteId);
    },
  };
}
