// Who may reach which workspace, and a job's output. The filesystem rules are workspace.ts; here: the
// project's people (and the tenant's leads) read and write its workspace at each site its residency
// allows; everyone else is told "not found", as for any other tenant's record.
import { and, eq } from 'drizzle-orm';
import { open } from 'node:fs/promises';
import { constants } from 'node:fs';
import type { Db, DbOrTx } from '~/db/client';
import { jobs, organisations, projects, sites } from '~/db/schema';
import { AppError } from '~/server/errors';
import { residencyAllowsSite } from '~/server/core/jobs/admission';
import { jobFolderPath, outputFileName, type OutputStream } from '~/server/core/files/job-folder';
import { isFinalState } from '~/server/core/scheduler/port';
import type { Actor, TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { projectAccess } from '~/server/services/tenants/projects';
import { jobDirOf, openFolder, pathRefused, statEntry, workspaceOf, type SiteRoots, type Workspace } from './workspace';
import { checkPath } from '~/server/core/files/paths';

/** The sites a project has a workspace at: those its (and its tenant's) residency allows. */
export async function workspaceSites(db: DbOrTx, actor: TenantActor, projectId: string) {
  const access = await projectAccess(db, actor, projectId);
  const [org] = await db.select({ residency: organisations.residency }).from(organisations).where(eq(organisations.id, actor.org.id));
  const all = await db.select().from(sites).orderBy(sites.id);
  const projectResidency = access.project.dataResidency;
  return all.filter((s) => residencyAllowsSite(org!.residency, s) && (!projectResidency || residencyAllowsSite(projectResidency, s)));
}

/**
 * projectWorkspace returns a project's workspace at a site for a person who may use it: NOT_FOUND for
 * a project of another tenant (or one they are not in), and a site the residency rules out.
 */
export async function projectWorkspace(db: DbOrTx, actor: TenantActor, input: { projectId: string; siteId: string }, roots: SiteRoots): Promise<Workspace> {
  const allowed = await workspaceSites(db, actor, input.projectId);
  if (!allowed.some((s) => s.id === input.siteId)) throw new AppError('NOT_FOUND', 'files.noWorkspaceHere', {}, 'site');
  return workspaceOf(roots, input.siteId, input.projectId);
}

/** A job the person may read (as the job page: their own, or one of a project they are in or lead), with where its files are. */
export async function jobWorkspace(db: DbOrTx, actor: TenantActor, jobId: string, roots: SiteRoots) {
  const [job] = await db
    .select({ id: jobs.id, userId: jobs.userId, projectId: jobs.projectId, siteId: jobs.siteId, state: jobs.state, arrayTasks: jobs.arrayTasks, settledAt: jobs.settledAt })
    .from(jobs)
    .where(and(eq(jobs.id, jobId), eq(jobs.orgId, actor.org.id)));
  if (!job) throw new AppError('NOT_FOUND', 'error.notFound');
  if (job.userId !== actor.userId) await projectAccess(db, actor, job.projectId);
  const workspace = workspaceOf(roots, job.siteId, job.projectId);
  return { job, workspace, dir: jobDirOf(workspace, job.id), folder: jobFolderPath(job.id) };
}

/** How many bytes at the start continue a character begun before them (UTF-8 continuation bytes). */
function leadingContinuation(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length && i < 3 && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}

/** How many bytes hold whole characters: a character cut at the end (an unfinished UTF-8 sequence) is left out. */
function completeUtf8(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** The most bytes one read of a job's output returns. */
export const MAX_OUTPUT_CHUNK = 256 * 1024;

export interface OutputRead {
  /** The text read, whole lines (a line cut by the chunk's start is left out, unless it starts the file). */
  text: string;
  /** Byte offsets of the text in the file: [start, end). */
  start: number;
  end: number;
  /** The file's size when read. */
  size: number;
  /** The file exists (a job that has not started has none yet). */
  exists: boolean;
  /** The job has ended and been settled: nothing more will be written. */
  done: boolean;
}

/**
 * readJobOutput reads a piece of a job's stdout or stderr: the last `limit` bytes (no `from`/`before`),
 * what follows `from` (following the log), or what precedes `before` (older lines on demand). Never more
 * than MAX_OUTPUT_CHUNK; the file is opened without following a link (a job may plant one).
 */
export async function readJobOutput(
  db: DbOrTx,
  actor: TenantActor,
  input: { jobId: string; stream: OutputStream; task?: number; from?: number; before?: number; limit?: number },
  roots: SiteRoots,
): Promise<OutputRead> {
  const { job, workspace, folder } = await jobWorkspace(db, actor, input.jobId, roots);
  if (input.task !== undefined && (job.arrayTasks === null || input.task < 0)) throw new AppError('BAD_REQUEST', 'job.output.notATask', {}, 'task');
  const done = job.settledAt !== null && job.state !== 'SUBMITTING' && isFinalState(job.state);
  const limit = Math.max(1, Math.min(MAX_OUTPUT_CHUNK, input.limit ?? 64 * 1024));
  const name = outputFileName(input.stream, input.task);
  const empty = { text: '', start: 0, end: 0, size: 0, exists: false, done };
  let dir;
  try {
    dir = await openFolder(workspace, folder.split('/'));
  } catch (error) {
    if (error instanceof AppError && error.key === 'files.notFound') return empty;
    throw error;
  }
  try {
    let handle;
    try {
      handle = await open(dir.at(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return empty;
      if (code === 'ELOOP') throw new AppError('BAD_REQUEST', 'files.path.link', {}, 'stream');
      throw error;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new AppError('BAD_REQUEST', 'files.path.notFile', {}, 'stream');
      const size = st.size;
      let start: number;
      let end: number;
      if (input.from !== undefined) {
        start = Math.min(input.from, size);
        end = Math.min(size, start + limit);
      } else {
        end = input.before !== undefined ? Math.min(input.before, size) : size;
        start = Math.max(0, end - limit);
      }
      const buffer = Buffer.alloc(end - start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      let bytes = buffer.subarray(0, bytesRead);
      end = start + bytesRead;
      // Whole lines only: a line cut at the start (reading backwards) is dropped; one still being written
      // at the end waits for its newline. A line longer than a whole chunk comes in pieces, cut between
      // characters, never inside one (a follower joins the pieces by byte offsets).
      if (input.from === undefined && start > 0) {
        // Does the chunk start a line? The byte before it tells.
        const before = Buffer.alloc(1);
        await handle.read(before, 0, 1, start - 1);
        if (before[0] !== 0x0a) {
          const nl = bytes.indexOf(0x0a);
          const skip = nl >= 0 && nl < bytes.length - 1 ? nl + 1 : leadingContinuation(bytes);
          bytes = bytes.subarray(skip);
          start += skip;
        }
      }
      const more = start + bytes.length < size;
      if (!done || more) {
        const lastNl = bytes.lastIndexOf(0x0a);
        if (lastNl >= 0) bytes = bytes.subarray(0, lastNl + 1);
        else if (bytesRead >= limit || done) bytes = bytes.subarray(0, completeUtf8(bytes));
        else bytes = bytes.subarray(0, 0); // the line is still being written
      }
      end = start + bytes.length;
      return { text: bytes.toString('utf8'), start, end, size, exists: true, done };
    } finally {
      await handle.close();
    }
  } finally {
    await dir.close();
  }
}

/** The most inputs one job may name. */
export const MAX_INPUTS = 20;

/**
 * inputsEnv checks the files and folders a job's form picked from its project's workspace at the job's
 * site (each must be there, a file or a folder, no link) and gives them to the job as `PORTAL_INPUTS`:
 * their absolute paths on the cluster, joined by `:` (so a path with a `:` is refused).
 */
export async function inputsEnv(workspace: Workspace, inputs: readonly string[]): Promise<Record<string, string>> {
  if (inputs.length === 0) return {};
  if (inputs.length > MAX_INPUTS) throw new AppError('BAD_REQUEST', 'job.inputsTooMany', { max: MAX_INPUTS }, 'inputs');
  const paths: string[] = [];
  for (const input of inputs) {
    if (input.includes(':')) throw new AppError('BAD_REQUEST', 'job.inputColon', { path: input }, 'inputs');
    const entry = await statEntry(workspace, input, 'inputs').catch((error: unknown) => {
      if (error instanceof AppError && error.key === 'files.notFound') throw new AppError('BAD_REQUEST', 'job.inputMissing', { path: input }, 'inputs');
      throw error;
    });
    if (entry.type !== 'file' && entry.type !== 'folder') throw new AppError('BAD_REQUEST', 'files.path.link', {}, 'inputs');
    paths.push(`${workspace.dir}/${input.replace(/\/+$/, '')}`);
  }
  return { PORTAL_INPUTS: paths.join(':') };
}

/**
 * staffWorkspace is a project's workspace for centre staff, who read any tenant's (support, audits) —
 * each read written to the audit log under the tenant, with the path: `files.staff_listed` for a folder,
 * `files.staff_downloaded` for a download.
 */
export async function staffWorkspace(db: Db, actor: Actor, input: { projectId: string; siteId: string; path: string; action: 'files.staff_listed' | 'files.staff_downloaded' }, roots: SiteRoots): Promise<Workspace> {
  // A path that breaks the rules is refused before it is written anywhere (the audit row's data is JSON).
  const checked = checkPath(input.path, { allowRoot: true });
  if (!checked.ok) throw pathRefused(checked.problem);
  const [project] = await db.select({ orgId: projects.orgId }).from(projects).where(eq(projects.id, input.projectId));
  const [site] = await db.select({ id: sites.id }).from(sites).where(eq(sites.id, input.siteId));
  if (!project || !site) throw new AppError('NOT_FOUND', 'error.notFound');
  await recordAudit(db, { actorUserId: actor.userId, orgId: project.orgId, action: input.action, targetType: 'project', targetId: input.projectId, data: { site: input.siteId, path: input.path } });
  return workspaceOf(roots, input.siteId, input.projectId);
}

/** staffProjectSites is a project's tenant, title and the sites it has a workspace at, for staff pages. */
export async function staffProjectSites(db: DbOrTx, projectId: string) {
  const [row] = await db
    .select({ title: projects.title, orgId: organisations.id, orgName: organisations.name, orgResidency: organisations.residency, projectResidency: projects.dataResidency })
    .from(projects)
    .innerJoin(organisations, eq(organisations.id, projects.orgId))
    .where(eq(projects.id, projectId));
  if (!row) throw new AppError('NOT_FOUND', 'error.notFound');
  const all = await db.select().from(sites).orderBy(sites.id);
  const allowed = all.filter((s) => residencyAllowsSite(row.orgResidency, s) && (!row.projectResidency || residencyAllowsSite(row.projectResidency, s)));
  return { title: row.title, orgId: row.orgId, orgName: row.orgName, sites: allowed };
}
