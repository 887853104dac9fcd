// Where a session's app listens: `<job folder>/connection.json`, written by the session's launcher
// (bin/portal-session) once the app answers: {"host", "port", "secret", "basePath"}. The job writes it,
// so it is the person's input like any other: every field is checked, a link or a file with more than
// one name is refused (it could point at another person's session), and a bad file counts as "not
// ready yet", never as a place to connect to.
import { z } from 'zod';
import { AppError } from '~/server/errors';
import { jobFolderPath } from '~/server/core/files/job-folder';
import { logger } from '~/server/observability/log';
import { openFile, type Workspace } from '~/server/services/files/workspace';

/** The file's name in the job's folder. */
export const CONNECTION_FILE = 'connection.json';

/** The most bytes the file may have (it holds four short fields). */
const MAX_BYTES = 4096;

/** A node's name as the scheduler reports it: letters, digits, dots, hyphens, underscores; no port, no path. */
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

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

/**
 * readConnection reads and checks a job's connection.json in its workspace: following no link on the
 * way (workspace.ts `openFile`), a regular file with one name only (a hard link could be another
 * person's file), readable by its owner alone (the launcher writes it 0600: a secret others can read
 * is no secret) and at most MAX_BYTES long.
 */
export async function readConnection(workspace: Workspace, jobId: string): Promise<SessionConnection | ConnectionMissing> {
  const where = `${jobFolderPath(jobId)}/${CONNECTION_FILE}`;
  let file;
  try {
    file = await openFile(workspace, where, 'connection');
  } catch (error) {
    if (error instanceof AppError && error.key === 'files.notFound') return 'missing';
    // A link, a folder, an unreadable file: not something to connect with.
    logger().warn({ component: 'sessions', jobId, err: error }, `the session's ${CONNECTION_FILE} cannot be opened safely; the session counts as not ready`);
    return 'invalid';
  }
  try {
    const st = await file.handle.stat();
    if (st.nlink !== 1 || (st.mode & 0o077) !== 0 || st.size > MAX_BYTES) {
      logger().warn(
        { component: 'sessions', jobId, links: st.nlink, mode: (st.mode & 0o777).toString(8), bytes: st.size },
        `the session's ${CONNECTION_FILE} must be a file of its own, mode 0600, at most ${MAX_BYTES} bytes; the session counts as not ready`,
      );
      return 'invalid';
    }
    const text = await file.handle.readFile({ encoding: 'utf8' });
    const parsed = parseConnection(text.slice(0, MAX_BYTES), jobId);
    if (!parsed.ok) {
      logger().warn({ component: 'sessions', jobId, field: parsed.field }, `the session's ${CONNECTION_FILE}: ${parsed.field} ${parsed.problem}; the session counts as not ready`);
      return 'invalid';
    }
    return parsed.connection;
  } finally {
    await file.handle.close();
  }
}
