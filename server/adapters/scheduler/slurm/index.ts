// SCHEDULER=slurm: the SchedulerPort on a real Slurm through slurmrestd, built from the configuration.
// See adapter.ts for the hand-over, accounting and failure rules, api.ts for the REST calls.
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { PortalEnv } from '~/server/env.js';
import { SchedulerRefusedError, type SchedulerJobSpec } from '~/server/core/scheduler/port';
import { ASSUMED_GPU_UTIL_PERCENT } from '~/server/core/jobs/estimates';
import { createSlurmPort, type SlurmClassInfo, type SlurmScheduler } from './adapter';
import { createSlurmApi } from './api';
import { createSlurmClient } from './client';
import { tokenSource } from './jwt';
import { SlurmError } from './errors';
import type { SacctmgrRunner } from './limits';
import { JOB_UMASK, jobFolder, shellQuote, slurmOutputPath, submitBody, type SlurmLauncher } from './mapping';

const execFileAsync = promisify(execFile);

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
  /** Jobs run as their person (SLURM_SUBMIT_AS=person) in their project's folder, or all as the service user. */
  submitAs: 'service' | 'person';
  /** Each project account's own limit over all members, written with sacctmgr (SLURM_ACCOUNT_LIMITS=sacctmgr), or none. */
  accountLimits: 'off' | 'sacctmgr';
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
    submitAs: config.SLURM_SUBMIT_AS,
    accountLimits: config.SLURM_ACCOUNT_LIMITS,
  };
}

/**
 * stoppable wraps a batch script so that a stop (SIGUSR1 to the job: a service asked to end) ends its
 * command and the job reports a clean end (COMPLETED, 0:0). Slurm's own SIGTERM (a time limit, a cancel)
 * is passed on and then ends the script by that signal, so Slurm records it as it happened (0:15), also
 * when the command got the signal first and ended by it; the command's own failures keep their exit code.
 */
export function stoppable(script: string): string {
  const body = script.replace(/^#!\/bin\/bash\n/, '');
  return [
    '#!/bin/bash',
    `umask ${JOB_UMASK}`,
    `trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 0' USR1`,
    `trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; trap - TERM; kill -TERM $$' TERM`,
    `/bin/bash -c ${shellQuote(body)} &`,
    'child=$!',
    'wait "$child"',
    'status=$?',
    // Slurm signals every process of the job, so the command may end by the signal before this shell
    // takes its own copy: a stop still ends clean, any other signal ends this shell the same way.
    '[ "$status" -eq 138 ] && exit 0',
    '[ "$status" -gt 128 ] && [ "$status" -lt 160 ] && { trap - TERM USR1; kill -"$((status - 128))" $$; }',
    'exit "$status"',
    '',
  ].join('\n');
}

export interface SlurmSchedulerOptions {
  /** The fetch slurmrestd is called with (tests wrap it to drop answers). */
  fetch?: typeof globalThis.fetch;
  now?: () => Date;
  log?: (line: string) => void;
  /** Runs sacctmgr (tests pass a fake); default the sacctmgr on PATH, as the portal's Unix user. */
  sacctmgr?: SacctmgrRunner;
  /** Makes a project's folder before its first job (tests pass a fake); default ensureProjectFolder. */
  ensureProjectFolder?: (folder: string, group: string) => Promise<void>;
}

/**
 * ensureProjectFolder makes a project's job folder where it is missing: owned by the project's group, mode
 * 2770 (members write, new files keep the group, nobody else enters). The portal can do it where it runs
 * on the cluster's file system as root (or with CAP_CHOWN); elsewhere the centre's provisioning makes the
 * folders, and a job whose folder is missing is refused with what to do.
 */
export async function ensureProjectFolder(folder: string, group: string): Promise<void> {
  try {
    if ((await stat(folder)).isDirectory()) return;
  } catch {
    // missing: make it below
  }
  try {
    const gid = await groupId(group);
    await mkdir(folder, { mode: 0o770 });
    await chown(folder, process.getuid?.() ?? 0, gid);
    await chmod(folder, 0o2770);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw new SchedulerRefusedError(
      `the project's folder ${folder} is missing and the portal cannot make it (${error instanceof Error ? error.message : String(error)}): create it owned by group ${group}, mode 2770`,
      'other',
    );
  }
}

/** runSacctmgr runs sacctmgr (its answer, or a transient SlurmError with what it said). */
async function runSacctmgr(args: string[]): Promise<string> {
  try {
    return (await execFileAsync('sacctmgr', args, { timeout: 30_000 })).stdout;
  } catch (error) {
    const e = error as { stderr?: string; message?: string };
    throw new SlurmError('transient', `sacctmgr ${args.join(' ')}: ${(e.stderr || e.message || String(error)).trim()}`);
  }
}

/** groupId looks a group up in the system's directory (NSS: /etc/group, LDAP, SSSD) as `getent group` does. */
async function groupId(group: string): Promise<number> {
  const { stdout } = await execFileAsync('getent', ['group', group]).catch(() => ({ stdout: '' }));
  const gid = Number(stdout.split(':')[2]);
  if (!stdout || !Number.isInteger(gid)) throw new Error(`the group ${group} is not in the directory`);
  return gid;
}

/** createSlurmScheduler builds the Slurm adapter for these settings and resource classes. */
export function createSlurmScheduler(settings: SlurmSettings, classes: SlurmClassInfo[], options: SlurmSchedulerOptions = {}): SlurmScheduler {
  const now = options.now ?? (() => new Date());
  const clientFor = (user: string, tokenFile = settings.tokenFile) => {
    const token = tokenSource({ tokenFile, keyFile: settings.jwtKeyFile, user, lifespanSeconds: settings.tokenLifespanSeconds, now: () => now().getTime() });
    const client = createSlurmClient({ baseUrl: settings.restUrl, user, token, ...(options.fetch ? { fetch: options.fetch } : {}) });
    return { client, renewToken: () => token.invalidate(), token };
  };
  const service = clientFor(settings.user);
  const person = settings.submitAs === 'person';
  // Acting for a person: their name in X-SLURM-USER-NAME with the service's (privileged) token.
  const people = new Map<string, ReturnType<typeof clientFor>>();
  const asPerson = (user: string) => {
    let found = people.get(user);
    if (!found) {
      const client = createSlurmClient({ baseUrl: settings.restUrl, user, token: service.token, ...(options.fetch ? { fetch: options.fetch } : {}) });
      found = { client, renewToken: service.renewToken, token: service.token };
      people.set(user, found);
    }
    return found;
  };
  const api = createSlurmApi({
    ...service,
    // The admin's tokens are minted from the JWT key (a token file holds the service user's only).
    ...(settings.adminUser && settings.jwtKeyFile ? { admin: clientFor(settings.adminUser, undefined) } : {}),
    cluster: settings.cluster,
    serviceUser: settings.user,
    now,
    ...(person ? { asPerson } : {}),
    ...(settings.accountLimits === 'sacctmgr' ? { sacctmgr: options.sacctmgr ?? runSacctmgr } : {}),
  });
  const port = createSlurmPort({
    api,
    partitions: settings.partitions,
    classes,
    submitBody: async (spec: SchedulerJobSpec, partition: string) => {
      const classOptions = classes.find((c) => c.id === spec.partition)?.slurm;
      const body = submitBody(spec, { partition, jobDir: settings.jobDir, launcher: settings.launcher, now: now(), requeue: settings.requeue, perProject: person, ...(classOptions ? { classOptions } : {}) });
      if (person) await (options.ensureProjectFolder ?? ensureProjectFolder)(jobFolder(settings.jobDir, spec.group), spec.group!);
      return { ...body, script: stoppable(body.script ?? '') };
    },
    submitAsPerson: person,
    pollMs: settings.pollSeconds * 1000,
    cluster: settings.cluster,
    now,
    assumedGpuUtilPercent: ASSUMED_GPU_UTIL_PERCENT,
    ...(options.log ? { log: options.log } : {}),
  });
  // An array's tasks each write their own file: `arrayTask` names one, or '%a' for the pattern of them all
  // (beyond the port's three arguments: its callers know whether the job is an array).
  port.outputLocation = (portalJobId: string, schedulerJobId: string, group?: string | null, arrayTask?: number | '%a') => slurmOutputPath(settings.jobDir, portalJobId, schedulerJobId, person ? group : undefined, arrayTask);
  return port;
}
