// The simulated cluster's interactive sessions (issue #28). A real cluster runs a session's launcher
// (bin/portal-session) on the node it gives the job; the simulated cluster's nodes are this machine, so
// when a session job starts here the adapter runs the same launcher as a real child process, and stops
// it when the job ends — the session is real in the embedded default too. The child gets a clean
// environment (the portal's own secrets and database address stay out of it), writes its output into
// the job's folder, and ends by itself should the portal die (PORTAL_SESSION_PARENT_PID).
import path from 'node:path';
import type { OutputJob, SchedulerJobStatus } from '~/server/core/scheduler/port';
import { loginEnv, simulatedChildren } from './simulated-children';

/** The launcher the portal ships; a centre's nodes run their own copy (docs/sessions.md). */
export const SESSION_LAUNCHER = path.resolve(process.cwd(), 'bin/portal-session');

/** How long a session has to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 10_000;

const sessions = simulatedChildren(
  'sessions',
  (job, node) =>
    job.kind === 'interactive' && job.app && job.workspace
      ? {
          command: SESSION_LAUNCHER,
          args: [job.app],
          // What a login on a node would have, and the job's own variables.
          env: {
            ...loginEnv(),
            PORTAL_JOB_ID: job.jobId,
            PORTAL_JOB_DIR: job.workDir,
            PORTAL_WORKSPACE: job.workspace,
            PORTAL_NODE_NAME: node,
            PORTAL_SESSION_BIND: '127.0.0.1',
            PORTAL_SESSION_PARENT_PID: String(process.pid),
          },
          stdout: 'stdout.log',
          stderr: 'stderr.log',
          // The launcher leads its own process group: the app and its kernels stop with it.
          group: true,
          what: `the session app ${job.app}`,
        }
      : null,
  STOP_GRACE_MS,
);

/**
 * followSimulatedSessions starts the app of each interactive job the simulated cluster runs and has
 * not started yet, and stops the app of each that ended. Other jobs are left alone.
 */
export function followSimulatedSessions(items: readonly { job: OutputJob; status: SchedulerJobStatus }[]): void {
  sessions.follow(items);
}

/** runningSessions lists the jobs whose app runs here now (tests). */
export function runningSessions(): string[] {
  return sessions.running();
}
