// Where each site's project workspaces lie: the catalogue's `filesystemRoot`, else (a real Slurm)
// SLURM_JOB_DIR, else the embedded default, a folder under the portal's data directory.
import path from 'node:path';
import { configuredCatalogue } from '~/server/catalogue';
import { env } from '~/server/env.js';
import { projectGroupName } from '~/server/core/scheduler/identity';
import { primaryGroupOf } from './unix-groups';
import type { SiteRoots } from './workspace';

let roots: SiteRoots | undefined;

/** configuredSiteRoots is the process's SiteRoots, from the catalogue and the environment (one object: caches key on it). */
export function configuredSiteRoots(): SiteRoots {
  roots ??= {
    rootOf(siteId) {
      const site = configuredCatalogue().sites.find((s) => s.id === siteId);
      if (!site) throw new Error(`no site ${siteId} in the catalogue`);
      if (site.filesystemRoot) return site.filesystemRoot;
      const config = env();
      if (config.SCHEDULER === 'slurm') return path.resolve(config.SLURM_JOB_DIR);
      return path.resolve(config.PORTAL_FILES_DIR ?? path.join(config.PORTAL_DATA_DIR, 'files'), siteId);
    },
    // On a real Slurm the workspace is the group's its jobs run in: the project's when they run as their
    // people, else the service user's (SLURM_SUBMIT_AS=service); the simulated cluster needs none.
    groupOf(projectId) {
      const config = env();
      if (config.SCHEDULER !== 'slurm') return Promise.resolve(null);
      return config.SLURM_SUBMIT_AS === 'person' ? Promise.resolve(projectGroupName(projectId)) : primaryGroupOf(config.SLURM_REST_USER);
    },
  };
  return roots;
}
