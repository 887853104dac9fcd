// `npm run worker`: the reconciler, cluster sampling and expiry as a process of its own (for
// deployments that run several web servers on one Postgres; the advisory lock lets one act).
import { DataDirLockedError } from '~/db/lock';
import { startAppDb } from '~/server/db';
import { ConfigError } from '~/server/env.js';
import { logger } from '~/server/observability/log';
import { getScheduler } from '~/server/scheduler';
import { startWorker } from '~/server/worker';

async function main() {
  const handle = await startAppDb({ command: 'npm run worker', seed: false });
  const worker = startWorker(handle, await getScheduler(handle.db));
  logger().info({ component: 'worker' }, 'running; Ctrl+C stops it');
  const stop = () => {
    worker.stop();
    void handle.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  setInterval(() => undefined, 1 << 30);
}

main().catch((error: unknown) => {
  console.error(error instanceof DataDirLockedError || error instanceof ConfigError ? error.message : error);
  process.exitCode = 1;
});
