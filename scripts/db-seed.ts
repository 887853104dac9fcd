// `npm run db:seed`: seed the demo centre into the configured database if it has no users yet.
// Refused in production mode; refused while a server holds the embedded folder.
import { DataDirLockedError } from '~/db/lock';
import { closeAppDb, startAppDb } from '~/server/db';
import { ConfigError, env } from '~/server/env.js';
import { demoSignInBanner, seedDemoCentreIfEmpty } from '~/server/services/demo/demo-seed';

async function main() {
  if (env().PORTAL_ENV === 'production') {
    console.error('Refusing to seed demo data: PORTAL_ENV=production.');
    process.exitCode = 2;
    return;
  }
  const handle = await startAppDb({ command: 'npm run db:seed', seed: false });
  const seeded = await seedDemoCentreIfEmpty(handle.db, { log: console.log });
  if (!seeded) console.log(`The database already has users; nothing seeded. The demo sign-ins, if it was seeded before:${demoSignInBanner()}`);
  await closeAppDb();
}

main().catch((error: unknown) => {
  if (error instanceof DataDirLockedError || error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exitCode = 1;
});
