// `npm run db:migrate`: apply the committed migrations to the configured database (the server also does this on start).
import { DataDirLockedError } from '~/db/lock';
import { closeAppDb, startAppDb } from '~/server/db';
import { ConfigError } from '~/server/env.js';

startAppDb({ command: 'npm run db:migrate', seed: false })
  .then(async (handle) => {
    console.log(`Migrations applied (${handle.driver}).`);
    await closeAppDb();
  })
  .catch((error: unknown) => {
    if (error instanceof DataDirLockedError || error instanceof ConfigError) console.error(error.message);
    else console.error(error);
    process.exitCode = 1;
  });
