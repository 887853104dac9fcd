// SCHEDULER=slurm: the SchedulerPort on a real Slurm through slurmrestd, built from the configuration.
// See adapter.ts for the hand-over, accounting and failure rules, api.ts for the REST calls.
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { promisify } from 'node:util';
import type { PortalEnv } from '~/server/env.js';
import { SchedulerRefusedError, type SchedulerJobSpec } from '~/server/core/scheduler/port';
import { jobFolderPath } from '~/server/core/files/job-folder';
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
  /**
   * Makes a folder of a project's before its job (SLURM_SUBMIT_AS=person; tests pass a fake), default
   * ensureProjectFolder: the project's folder, or with the spec's `workDir` its workspace, `jobs` and the job's
   * folder, in that order.
   */
  ensureProjectFolder?: (folder: string, group: string) => Promise<void>;
  /** Lets the service user write a job's `workDir` (SLURM_SUBMIT_AS=service; tests pass a fake); default ensureServiceJobFolder. */
  ensureServiceJobFolder?: (workDir: string, user: string) => Promise<void>;
}

/** A folder's owner and mode, as stat gives them. */
export type FolderOwnership = Pick<Stats, 'uid' | 'gid' | 'mode'>;

/** A Unix user's id and groups (its primary group first), as `id -u` and `id -G` give them. */
export interface UnixIds {
  uid: number;
  gids: number[];
}

/**
 * mayAccess tells whether a user may do `want` (the bits r 4, w 2, x 1) on a file of this owner and mode, as
 * the kernel decides it without ACLs: the owner's bits, else the group's for a member, else the others'.
 */
export function mayAccess(file: FolderOwnership, who: UnixIds, want: number): boolean {
  if (who.uid === 0) return true;
  const bits = file.uid === who.uid ? file.mode >> 6 : who.gids.includes(file.gid) ? file.mode >> 3 : file.mode;
  return (bits & want) === want;
}

/**
 * A project's folder is right when it is its group's with setgid and the group's rwx (2770, or wider where the
 * centre's provisioning made it so): members write there and what they make keeps the group.
 */
export function projectFolderIsRight(folder: FolderOwnership, gid: number): boolean {
  return folder.gid === gid && (folder.mode & 0o2070) === 0o2070;
}

/**
 * jobFolders splits a job's working folder `<workspace>/jobs/<job id>` into the folders the portal fixes for
 * its project or its service user: the workspace, its `jobs` and the job's own. Anything else is an error
 * before a folder is touched, since the workspace is given to the project's group: it must be named after
 * it (`<site root>/<group>`) when the group is known.
 */
export function jobFolders(workDir: string, portalJobId: string, group?: string): [workspace: string, jobs: string, job: string] {
  const tail = `/${jobFolderPath(portalJobId)}`;
  const workspace = workDir.endsWith(tail) ? workDir.slice(0, -tail.length) : '';
  const name = workspace.slice(workspace.lastIndexOf('/') + 1);
  if (!workspace.startsWith('/') || name === '' || (group !== undefined && name !== group)) {
    throw new Error(`the job's working folder ${JSON.stringify(workDir)} is not <workspace>/jobs/${portalJobId}${group ? ` with the workspace named ${group}` : ''}`);
  }
  return [workspace, `${workspace}/jobs`, workDir];
}

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * ensureProjectFolder makes a project's folder where it is missing, and gives one the portal made before (as
 * root, or with its own group) to the project: owned by the project's group, mode 2770 (members write, new
 * files keep the group, nobody else enters). The portal can do it where it runs on the cluster's file system
 * as root (or with CAP_CHOWN); elsewhere the centre's provisioning makes the folders, and a job whose folder
 * is missing or not the group's is refused with what to do. The group must be in the directory the portal's
 * host reads (`getent group`).
 */
export async function ensureProjectFolder(folder: string, group: string): Promise<void> {
  let found: Stats | null = null;
  try {
    found = await stat(folder);
  } catch {
    // missing: make it below
  }
  if (found && !found.isDirectory()) throw new SchedulerRefusedError(`the project's folder ${folder} is not a folder: make it a folder owned by group ${group}, mode 2770`, 'other');
  let gid: number;
  try {
    gid = await groupId(group);
  } catch (error) {
    throw new SchedulerRefusedError(`the project's folder ${folder} cannot be checked (${error instanceof Error ? error.message : String(error)}): the portal's host must know group ${group}`, 'other');
  }
  if (found && projectFolderIsRight(found, gid)) return;
  try {
    if (!found) await mkdir(folder, { mode: 0o770 });
    // Its owner may set the mode but may give it to a group only as root or as a member of the group.
    if (found?.gid !== gid) await chown(folder, found?.uid ?? process.getuid?.() ?? 0, gid);
    await chmod(folder, 0o2770);
    // Linux drops setgid from a chmod by an owner outside the group: what came out is checked, not assumed.
    const made = await stat(folder);
    if (!projectFolderIsRight(made, gid)) throw new Error(`it came out group id ${made.gid}, mode ${octal(made.mode)}`);
  } catch (error) {
    // Another hand-over made it meanwhile: it makes it right as this one would have.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    const why = error instanceof Error ? error.message : String(error);
    throw new SchedulerRefusedError(
      found
        ? `the project's folder ${folder} has group id ${found.gid}, mode ${octal(found.mode)}, and the portal cannot change it (${why}): give it to group ${group}, mode 2770`
        : `the project's folder ${folder} is missing and the portal cannot make it (${why}): create it owned by group ${group}, mode 2770`,
      'other',
    );
  }
}

/**
 * ensureServiceJobFolder lets the service user every job runs as (SLURM_SUBMIT_AS=service) write a job's
 * working folder `<workspace>/jobs/<id>`, which the portal made (mkdir -p, made here when missing): the job's
 * folder becomes the user's where it is not writable by it, and the workspace and `jobs` get the user's group
 * with the group's x only where the user cannot pass them. A portal that runs as the service user itself
 * changes nothing; one that runs as root (or with CAP_CHOWN) changes what is needed; any other is refused
 * with what to do.
 */
export async function ensureServiceJobFolder(workDir: string, user: string): Promise<void> {
  const refuse = (what: string, error: unknown) =>
    new SchedulerRefusedError(`${what} (${error instanceof Error ? error.message : String(error)}): run the portal as ${user} or as root, or make the job folders writable by ${user}`, 'other');
  let who: UnixIds;
  try {
    who = await unixIds(user);
  } catch (error) {
    throw refuse(`the service user ${user} is not known on the portal's host, so the job's folder ${workDir} cannot be given to it`, error);
  }
  const jobs = workDir.slice(0, workDir.lastIndexOf('/'));
  const workspace = jobs.slice(0, jobs.lastIndexOf('/'));
  try {
    await mkdir(workDir, { recursive: true });
  } catch (error) {
    throw refuse(`the job's folder ${workDir} cannot be made`, error);
  }
  for (const folder of [workspace, jobs]) {
    const found = await stat(folder);
    if (mayAccess(found, who, 0o1)) continue;
    try {
      await chown(folder, found.uid, who.gids[0]!);
      await chmod(folder, (found.mode & 0o7777) | 0o010);
    } catch (error) {
      throw refuse(`${user} cannot enter ${folder} and the portal cannot let it`, error);
    }
  }
  const found = await stat(workDir);
  if (mayAccess(found, who, 0o3)) return;
  try {
    await chown(workDir, who.uid, who.gids[0]!);
    await chmod(workDir, (found.mode & 0o7777) | 0o700);
  } catch (error) {
    throw refuse(`${user} cannot write the job's folder ${workDir} and the portal cannot give it to it`, error);
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

// Ids found in the directory, kept for the process's life (a user's or group's id does not change).
const groupIds = new Map<string, number>();
const userIds = new Map<string, UnixIds>();

/** groupId looks a group up in the system's directory (NSS: /etc/group, LDAP, SSSD) as `getent group` does. */
async function groupId(group: string): Promise<number> {
  const known = groupIds.get(group);
  if (known !== undefined) return known;
  const { stdout } = await execFileAsync('getent', ['group', group]).catch(() => ({ stdout: '' }));
  const gid = Number(stdout.split(':')[2]);
  if (!stdout || !Number.isInteger(gid)) throw new Error(`the group ${group} is not in the directory`);
  groupIds.set(group, gid);
  return gid;
}

/** unixIds looks a user's id and groups up in the system's directory, as `id -u` and `id -G` give them. */
async function unixIds(user: string): Promise<UnixIds> {
  const known = userIds.get(user);
  if (known) return known;
  const read = async (flag: string) => {
    const { stdout } = await execFileAsync('id', [flag, '--', user]).catch(() => ({ stdout: '' }));
    const ids = stdout.trim().split(/\s+/).filter((id) => id !== '').map(Number);
    if (ids.length === 0 || !ids.every(Number.isInteger)) throw new Error(`the user ${user} is not in the directory`);
    return ids;
  };
  const ids = { uid: (await read('-u'))[0]!, gids: await read('-G') };
  userIds.set(user, ids);
  return ids;
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
      const ensureFolder = options.ensureProjectFolder ?? ensureProjectFolder;
      if (spec.workDir) {
        // The portal made the job's folder (as root or as itself): its project's people, or the service
        // user, must write there. Top down, so each folder's parent is right before it.
        const folders = jobFolders(spec.workDir, spec.portalJobId, spec.group);
        if (person) for (const folder of folders) await ensureFolder(folder, spec.group!);
        else await (options.ensureServiceJobFolder ?? ensureServiceJobFolder)(spec.workDir, settings.user);
      } else if (person) await ensureFolder(jobFolder(settings.jobDir, spec.group), spec.group!);
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
  // A session's node is reached where slurmctld reaches it: its NodeAddr (its name when unset).
  port.sessionAddress = async (node: string) => {
    const found = (await api.nodes()).find((n) => n.name === node);
    return found?.address || node;
  };
  port.outputLocation = (portalJobId: string, schedulerJobId: string, group?: string | null, arrayTask?: number | '%a') => slurmOutputPath(settings.jobDir, portalJobId, schedulerJobId, person ? group : undefined, arrayTask);
  return port;
}
