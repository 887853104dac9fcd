// Where a session's app listens: `<job folder>/.portal-session/connection.json`, written by the session's launcher
// (bin/portal-session) once the app answers: {"host", "port", "secret", "basePath"}. The job writes it,
// so it is the person's input like any other: every field is checked, a link anywhere on the way or a
// file with more than one name is refused (it could point at another person's session), and a bad file
// counts as "not ready yet", never as a place to connect to.
import { constants } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { jobFolderPath } from '~/server/core/files/job-folder';
import { CONNECTION_FILE, SESSION_FOLDER } from '~/server/core/files/paths';

export { CONNECTION_FILE };
import { logger } from '~/server/observability/log';
import type { Workspace } from '~/server/services/files/workspace';


/** The most bytes the file may have (it holds four short fields). */
export const MAX_BYTES = 4096;

/** A node's name as the scheduler reports it: letters, digits, dots, hyphens, underscores; no port, no path. */
export const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/** The app's secret: 32 to 128 characters of the URL-safe base64 alphabet. */
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{32,128}$/;

/** Where a session's app listens and how the proxy proves itself to it. */
export interface SessionConnection {
  /** The node's name, one of the job's nodes (checked by the wall, proxy-access.ts). */
  host: string;
  port: number;
  /** The token the app was started with; sent as `Authorization: token <secret>`, never to the browser. */
  secret: string;
  /** `/sessions/<job id>/`: the path the app serves under, forwarded unchanged. */
  basePath: string;
}

/** sessionBasePath is the path a session's app serves under: `/sessions/<job id>/`. */
export function sessionBasePath(jobId: string): string {
  return `/sessions/${jobId}/`;
}

function connectionSchema(jobId: string) {
  return z.object({
    host: z.string().regex(NODE_NAME, 'must be a node name'),
    port: z.number().int('must be a whole number').min(1024, 'must be 1024 or more').max(65535, 'must be 65535 or less'),
    secret: z.string().regex(SECRET_PATTERN, 'must be 32 to 128 characters of A-Z, a-z, 0-9, _ and -'),
    basePath: z.literal(sessionBasePath(jobId), { error: `must be ${sessionBasePath(jobId)}` }),
  });
}

export type ParsedConnection = { ok: true; connection: SessionConnection } | { ok: false; field: string; problem: string };

/** parseConnection checks the text of a job's connection.json; a refusal names the field and the rule it broke (never the value). */
export function parseConnection(text: string, jobId: string): ParsedConnection {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, field: CONNECTION_FILE, problem: 'is not JSON' };
  }
  const parsed = connectionSchema(jobId).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.length ? issue.path.join('.') : CONNECTION_FILE;
    return { ok: false, field, problem: issue?.path.length ? issue.message : 'must be an object with host, port, secret and basePath' };
  }
  return { ok: true, connection: parsed.data };
}

/** Why a job has no usable connection file yet. */
export type ConnectionMissing = 'missing' | 'invalid';

/** The real path of each workspace seen (the portal makes them; their people cannot replace them). */
const realWorkspaces = new Map<string, string>();

async function realWorkspace(dir: string, fresh: boolean): Promise<string> {
  const known = fresh ? undefined : realWorkspaces.get(dir);
  if (known) return known;
  const real = await realpath(dir);
  realWorkspaces.set(dir, real);
  return real;
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * openConnectionFile opens `<workspace>/jobs/<id>/.portal-session/connection.json` following no link anywhere on the
 * way: the last name is opened with O_NOFOLLOW, and the path the kernel reports for the open file
 * (/proc/self/fd/N) must be exactly the workspace's real path, `jobs`, the id, the connection folder and
 * the file's name — a link in place of any of them would resolve elsewhere. Five system calls, where
 * walking the folders one by one (files/workspace.ts `openFile`) takes some fifteen: this runs on
 * every request through the proxy.
 */
async function openConnectionFile(workspace: Workspace, jobId: string): Promise<FileHandle | ConnectionMissing> {
  // In the job folder's connection folder, which the files API never shows or serves (core/files/paths.ts).
  const relative = `${jobFolderPath(jobId)}/${SESSION_FOLDER}/${CONNECTION_FILE}`;
  let handle: FileHandle;
  try {
    handle = await open(path.join(workspace.dir, relative), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = errno(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    logger().warn({ component: 'sessions', jobId, err: error }, `the session's ${CONNECTION_FILE} cannot be opened safely (${code === 'ELOOP' ? 'it is a link' : code ?? 'error'}); the session counts as not ready`);
    return 'invalid';
  }
  try {
    const where = await readlink(`/proc/self/fd/${handle.fd}`);
    // A workspace moved since it was first seen gets one fresh look before the file is refused.
    if (where === path.join(await realWorkspace(workspace.dir, false), relative) || where === path.join(await realWorkspace(workspace.dir, true), relative)) return handle;
    logger().warn({ component: 'sessions', jobId }, `a link on the way to the session's ${CONNECTION_FILE} leads out of its job's folder; the session counts as not ready`);
  } catch (error) {
    logger().warn({ component: 'sessions', jobId, err: error }, `the session's ${CONNECTION_FILE} cannot be checked; the session counts as not ready`);
  }
  await handle.close();
  return 'invalid';
}

/**
 * readConnection reads and checks a job's connection.json in its workspace: following no link on the
 * way (openConnectionFile), a regular file with one name only (a hard link could be another person's
 * file), readable by its owner alone (the launcher writes it 0600: a secret others can read is no
 * secret) and at most MAX_BYTES long. `parse` checks the content: a session's (parseConnection) by
 * default, an inference service's (services/inference/replicas.ts) where its model server wrote it.
 */
export async function readConnection(workspace: Workspace, jobId: string): Promise<SessionConnection | ConnectionMissing>;
export async function readConnection<T>(workspace: Workspace, jobId: string, parse: (text: string, jobId: string) => { ok: true; connection: T } | { ok: false; field: string; problem: string }): Promise<T | ConnectionMissing>;
export async function readConnection<T>(
  workspace: Workspace,
  jobId: string,
  parse: (text: string, jobId: string) => { ok: true; connection: T } | { ok: false; field: string; problem: string } = parseConnection as never,
): Promise<T | ConnectionMissing> {
  const handle = await openConnectionFile(workspace, jobId);
  if (typeof handle === 'string') return handle;
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.nlink !== 1 || (st.mode & 0o077) !== 0 || st.size > MAX_BYTES) {
      logger().warn(
        { component: 'sessions', jobId, file: st.isFile(), links: st.nlink, mode: (st.mode & 0o777).toString(8), bytes: st.size },
        `the job's ${CONNECTION_FILE} must be a file of its own, mode 0600, at most ${MAX_BYTES} bytes; the job counts as not ready`,
      );
      return 'invalid';
    }
    // One read of the whole small file (its size was just checked).
    const buffer = Buffer.alloc(st.size);
    const { bytesRead } = await handle.read(buffer, 0, st.size, 0);
    const parsed = parse(buffer.subarray(0, bytesRead).toString('utf8'), jobId);
    if (!parsed.ok) {
      logger().warn({ component: 'sessions', jobId, field: parsed.field }, `the job's ${CONNECTION_FILE}: ${parsed.field} ${parsed.problem}; the job counts as not ready`);
      return 'invalid';
    }
    return parsed.connection;
  } finally {
    await handle.close();
  }
}
