// SCHEDULER=slurm: the SchedulerPort on a real Slurm through slurmrestd, built from the configuration.
// See adapter.ts for the hand-over, accounting and failure rules, api.ts for the REST calls.
import type { PortalEnv } from '~/server/env.js';
import type { SchedulerJobSpec } from '~/server/core/scheduler/port';
import { ASSUMED_GPU_UTIL_PERCENT } from '~/server/core/jobs/estimates';
import { createSlurmPort, type SlurmClassInfo, type SlurmScheduler } from './adapter';
import { createSlurmApi } from './api';
import { createSlurmClient } from './client';
import { tokenSource } from './jwt';
import { shellQuote, slurmOutputPath, submitBody, type SlurmLauncher } from './mapping';

export interface SlurmSettings {
  restUrl: string;
  /** The service user the portal's jobs run as. */
  user: string;
  tokenFile?: string;
  jwtKeyFile?: string;
  tokenLifespanSeconds: number;
  cluster: string;
  /** Resource class id → Slurm partition. */
  partitions: Record<string, string>;
  jobDir: string;
  launcher: SlurmLauncher;
  pollSeconds: number;
  /** Whether Slurm may requeue the portal's jobs (SLURM_REQUEUE=on); else they go with --no-requeue. */
  requeue: boolean;
  /** A Slurm admin the budgets are written as (needs the JWT key, or its own token file). */
  adminUser?: string;
}

/** slurmSettings reads the Slurm settings of a validated configuration (SCHEDULER=slurm). */
export function slurmSettings(config: PortalEnv): SlurmSettings {
  if (!config.SLURM_REST_URL || !config.SLURM_CLUSTER || !config.SLURM_PARTITIONS) throw new Error('SCHEDULER=slurm needs SLURM_REST_URL, SLURM_CLUSTER and SLURM_PARTITIONS');
  return {
    restUrl: config.SLURM_REST_URL,
    user: config.SLURM_REST_USER,
    tokenFile: config.SLURM_REST_TOKEN_FILE,
    jwtKeyFile: config.SLURM_JWT_KEY_FILE,
    tokenLifespanSeconds: config.SLURM_TOKEN_LIFESPAN_SECONDS,
    cluster: config.SLURM_CLUSTER,
    partitions: config.SLURM_PARTITIONS,
    jobDir: config.SLURM_JOB_DIR,
    launcher: config.SLURM_JOB_LAUNCHER,
    pollSeconds: config.SLURM_POLL_SECONDS,
    requeue: config.SLURM_REQUEUE === 'on',
    adminUser: config.SLURM_ADMIN_USER,
  };
}

/**
 * stoppable wraps a batch script so that a stop (SIGUSR1 to the job: a service asked to end) ends its
 * command and the job reports a clean end (COMPLETED, 0:0). Slurm's own SIGTERM (a time limit, a cancel)
 * is passed on and then ends the script by that signal, so Slurm records it as it happened (0:15); the
 * command's own failures keep their exit code.
 */
export function stoppable(script: string): string {
  const body = script.replace(/^#!\/bin\/bash\n/, '');
  return [
    '#!/bin/bash',
    `trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 0' USR1`,
    `trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; trap - TERM; kill -TERM $$' TERM`,
    `/bin/bash -c ${shellQuote(body)} &`,
    'child=$!',
    'wait "$child"',
    '',
  ].join('\n');
}

export interface SlurmSchedulerOptions {
  /** The fetch slurmrestd is called with (tests wrap it to drop answers). */
  fetch?: typeof globalThis.fetch;
  now?: () => Date;
  log?: (line: string) => void;
}

/** createSlurmScheduler builds the Slurm adapter for these settings and resource classes. */
export function createSlurmScheduler(settings: SlurmSettings, classes: SlurmClassInfo[], options: SlurmSchedulerOptions = {}): SlurmScheduler {
  const now = options.now ?? (() => new Date());
  const clientFor = (user: string, tokenFile = settings.tokenFile) => {
    const token = tokenSource({ tokenFile, keyFile: settings.jwtKeyFile, user, lifespanSeconds: settings.tokenLifespanSeconds, now: () => now().getTime() });
    const client = createSlurmClient({ baseUrl: settings.restUrl, user, token, ...(options.fetch ? { fetch: options.fetch } : {}) });
    return { client, renewToken: () => token.invalidate() };
  };
  const service = clientFor(settings.user);
  const api = createSlurmApi({
    ...service,
    // The admin's tokens are minted from the JWT key (a token file holds the service user's only).
    ...(settings.adminUser && settings.jwtKeyFile ? { admin: clientFor(settings.adminUser, undefined) } : {}),
    cluster: settings.cluster,
    serviceUser: settings.user,
    now,
  });
  const port = createSlurmPort({
    api,
    partitions: settings.partitions,
    classes,
    submitBody: (spec: SchedulerJobSpec, partition: string) => {
      const body = submitBody(spec, { partition, jobDir: settings.jobDir, launcher: settings.launcher, now: now(), requeue: settings.requeue });
      return { ...body, script: stoppable(body.script ?? '') };
    },
    pollMs: settings.pollSeconds * 1000,
    cluster: settings.cluster,
    now,
    assumedGpuUtilPercent: ASSUMED_GPU_UTIL_PERCENT,
    ...(options.log ? { log: options.log } : {}),
  });
  port.outputLocation = (portalJobId, schedulerJobId) => slurmOutputPath(settings.jobDir, portalJobId, schedulerJobId);
  return port;
}
