// The simulated cluster's inference services (issue #29). A real cluster runs a service's model server
// (vLLM, llama.cpp's server, TGI — or bin/portal-model-server) as the job on the node it gives it; the
// simulated cluster's nodes are this machine, so when an inference job starts here the adapter runs the
// portal's own model server (bin/portal-model-server.mjs, a deterministic stand-in speaking OpenAI's
// protocol) as a real child process, and stops it when the job ends — as it does a session's app
// (simulated-sessions.ts). The server writes where it listens and its fresh secret into the job's
// connection file (`.portal-session/connection.json`, never shown by the files API), which the gateway
// reads (server/services/inference/replicas.ts); it gets a clean environment and ends with the portal.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { connectionFileIn } from '~/server/core/files/paths';
import type { OutputJob, SchedulerJobStatus } from '~/server/core/scheduler/port';
import { loginEnv, simulatedChildren } from './simulated-children';

/** The model server the portal ships (bin/portal-model-server/README.md). */
export const MODEL_SERVER = path.resolve(process.cwd(), 'bin/portal-model-server.mjs');

/** The model server's log in the job's folder: one line when ready, one JSON line per request (never a prompt or an answer). */
export const MODEL_SERVER_LOG = 'model-server.log';

/** The simulated model servers' time per answer token (ms). */
export const SIM_TOKEN_DELAY_MS = 10;

/** How long a model server has to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

/** connectionFileOf is where a service's model server writes host, port and secret (core/files/paths.ts connectionFileIn). */
export const connectionFileOf = connectionFileIn;

const services = simulatedChildren(
  'services',
  (job, node) =>
    job.kind === 'inference' && job.servedModel
      ? {
          command: process.execPath,
          args: [MODEL_SERVER],
          env: {
            ...loginEnv(),
            PORTAL_JOB_ID: job.jobId,
            PORTAL_JOB_DIR: job.workDir,
            PORTAL_NODE_NAME: node,
            PORTAL_MODEL_ID: job.servedModel,
            PORTAL_MODEL_HOST: '127.0.0.1',
            PORTAL_MODEL_CONNECTION_FILE: connectionFileOf(job.workDir),
            // A fresh secret per service (URL-safe, 43 characters): only the connection file, 0600, knows it.
            PORTAL_MODEL_SECRET: randomBytes(32).toString('base64url'),
            PORTAL_MODEL_PARENT_PID: String(process.pid),
            // Paced as a 7B model on one GPU streams, about 100 tokens a second: time to first token and
            // tokens per second look like a real model's, and a client can leave in the middle of an answer.
            PORTAL_MODEL_TOKEN_DELAY_MS: String(SIM_TOKEN_DELAY_MS),
          },
          stdout: MODEL_SERVER_LOG,
          stderr: MODEL_SERVER_LOG,
          group: false,
          what: `the model server of ${job.servedModel}`,
        }
      : null,
  STOP_GRACE_MS,
);

/**
 * followSimulatedServices starts the model server of each inference job the simulated cluster runs and
 * has not started yet, and stops the one of each that ended. Other jobs are left alone.
 */
export function followSimulatedServices(items: readonly { job: OutputJob; status: SchedulerJobStatus }[]): void {
  services.follow(items);
}

/** runningServices lists the jobs whose model server runs here now (tests). */
export function runningServices(): string[] {
  return services.running();
}
