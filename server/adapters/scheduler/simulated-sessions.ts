// The simulated cluster's interactive sessions (issue #28). A real cluster runs a session's launcher
// (bin/portal-session) on the node it gives the job; the simulated cluster's nodes are this machine, so
// when a session job starts here the adapter runs the same launcher as a real child process, and stops
// it when the job ends — the session is real in the embedded default too. The child gets a clean
// environment (the portal's own secrets and database address stay out of it), writes its output into
// the job's folder, and ends by itself should the portal die (PORTAL_SESSION_PARENT_PID).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { OutputJob, SchedulerJobStatus } from '~/server/core/scheduler/port';
import { isFinalState } from '~/server/core/scheduler/port';
import { logger } from '~/server/observability/log';

/** The launcher the portal ships; a centre's nodes run their own copy (docs/sessions.md). */
export const SESSION_LAUNCHER = path.resolve(process.cwd(), 'bin/portal-session');

/** How long a session has to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 10_000;

interface Sessions {
  children: Map<string, ChildProcess>;
  exitHook: boolean;
}
const sessions: Sessions = ((globalThis as { __portalSimSessions?: Sessions }).__portalSimSessions ??= { children: new Map(), exitHook: false });

/** The environment a session starts with: what a login on a node would have, and the job's own variables. */
function sessionEnv(job: OutputJob & { app: string; workspace: string }, node: string): Record<string, string | undefined> {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'LOGNAME', 'SHELL'];
  const env: Record<string, string | undefined> = {};
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  return {
    ...env,
    PORTAL_JOB_ID: job.jobId,
    PORTAL_JOB_DIR: job.workDir,
    PORTAL_WORKSPACE: job.workspace,
    PORTAL_NODE_NAME: node,
    PORTAL_SESSION_BIND: '127.0.0.1',
    PORTAL_SESSION_PARENT_PID: String(process.pid),
  };
}

function stopChild(jobId: string, child: ChildProcess): void {
  sessions.children.delete(jobId);
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    // The launcher leads its own process group: the app and its kernels stop with it.
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }, STOP_GRACE_MS);
  timer.unref();
}

function startChild(job: OutputJob & { app: string; workspace: string }, node: string): void {
  fs.mkdirSync(job.workDir, { recursive: true });
  const out = fs.openSync(path.join(job.workDir, 'stdout.log'), 'a');
  const err = fs.openSync(path.join(job.workDir, 'stderr.log'), 'a');
  try {
    const child = spawn(SESSION_LAUNCHER, [job.app], { cwd: job.workDir, env: sessionEnv(job, node) as NodeJS.ProcessEnv, detached: true, stdio: ['ignore', out, err] });
    child.on('error', (error) => logger().error({ err: error, jobId: job.jobId }, 'the session launcher could not start'));
    child.on('exit', () => {
      if (sessions.children.get(job.jobId) === child) sessions.children.delete(job.jobId);
    });
    child.unref();
    sessions.children.set(job.jobId, child);
    logger().info({ jobId: job.jobId, app: job.app, pid: child.pid }, 'a simulated session started its app on this machine');
  } finally {
    fs.closeSync(out);
    fs.closeSync(err);
  }
  if (!sessions.exitHook) {
    sessions.exitHook = true;
    process.once('exit', () => {
      for (const [jobId, child] of sessions.children) stopChild(jobId, child);
    });
  }
}

/**
 * followSimulatedSessions starts the app of each interactive job the simulated cluster runs and has
 * not started yet, and stops the app of each that ended. Other jobs are left alone.
 */
export function followSimulatedSessions(items: readonly { job: OutputJob; status: SchedulerJobStatus }[]): void {
  for (const { job, status } of items) {
    if (job.kind !== 'interactive' || !job.app || !job.workspace) continue;
    const child = sessions.children.get(job.jobId);
    if (isFinalState(status.state)) {
      if (child) stopChild(job.jobId, child);
    } else if (status.state === 'RUNNING' && !child) {
      startChild({ ...job, app: job.app, workspace: job.workspace }, status.nodeList[0] ?? 'localhost');
    }
  }
}

/** runningSessions lists the jobs whose app runs here now (tests). */
export function runningSessions(): string[] {
  return [...sessions.children.keys()];
}
