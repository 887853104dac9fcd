// `npm run usage:rebuild`: recompute the usage rollups from the settled jobs and print the totals
// before and after (they must be identical; a difference means the rollups had drifted).
import { sql } from 'drizzle-orm';
import { usageRollups } from '~/db/schema';
import { DataDirLockedError } from '~/db/lock';
import { closeAppDb, startAppDb } from '~/server/db';
import { ConfigError } from '~/server/env.js';
import { rebuildRollups } from '~/server/services/usage/usage';

async function totals() {
  const handle = await startAppDb({ command: 'npm run usage:rebuild', seed: false });
  const [row] = await handle.db
    .select({
      rows: sql<number>`count(*)::int`,
      jobs: sql<string>`coalesce(sum(${usageRollups.jobs}), 0)`,
      gpuSeconds: sql<string>`coalesce(sum(${usageRollups.gpuSeconds}), 0)`,
      costCents: sql<string>`coalesce(sum(${usageRollups.costCents}), 0)`,
      energyWh: sql<string>`coalesce(sum(${usageRollups.energyWh}), 0)`,
      co2eGrams: sql<string>`coalesce(sum(${usageRollups.co2eGrams}), 0)`,
    })
    .from(usageRollups);
  return row!;
}

async function main() {
  const before = await totals();
  const handle = await startAppDb({ command: 'npm run usage:rebuild', seed: false });
  const started = performance.now();
  const { rows } = await rebuildRollups(handle.db);
  const after = await totals();
  const same = ['jobs', 'gpuSeconds', 'costCents', 'energyWh', 'co2eGrams'].every((k) => String(before[k as keyof typeof before]) === String(after[k as keyof typeof after]));
  console.log(`Rebuilt ${rows} rollup rows in ${Math.round(performance.now() - started)} ms.`);
  console.log(`before: ${JSON.stringify(before)}`);
  console.log(`after:  ${JSON.stringify(after)}`);
  console.log(same ? 'Totals identical.' : 'Totals DIFFER: the rollups had drifted from the jobs; they are now rebuilt from the jobs.');
  await closeAppDb();
  if (!same) process.exitCode = 3;
}

main().catch((error: unknown) => {
  console.error(error instanceof DataDirLockedError || error instanceof ConfigError ? error.message : error);
  process.exitCode = 1;
});
