// A crash drill for the restart test (server/services/jobs/restart.integration.test.ts), run as a child
// process so it can be killed without warning:
//   phase "submit": creates a tenant with a budget, submits 50 jobs and runs the reconciler until killed;
//   phase "resume": opens the same database with a new scheduler instance, reconciles until every job
//   is final, then prints one JSON line with what the test checks.
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { migrateDb, openDb, type DbTarget } from '~/db/client';
import { allocations, jobs, ledgerEntries } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import { loadActor } from '~/server/services/identity/accounts';
import { syncCatalogue } from '~/server/services/catalogue';
import { submitJob } from '~/server/services/jobs/jobs';
import { balanceOfRow, ledgerSums } from '~/server/services/ledger/ledger';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { activeAllocation, createStaff, createTenant } from './harness';

const [phase, kind, location] = process.argv.slice(2) as ['submit' | 'resume', 'pglite' | 'postgres', string];
const target: DbTarget = kind === 'pglite' ? { driver: 'pglite', dataDir: location, command: `restart drill (${phase})` } : { driver: 'postgres', url: location };
const SPEED = 3600;
const JOBS = 50;

async function main() {
  const handle = await openDb(target);
  await migrateDb(handle);
  await syncCatalogue(handle.db, DEFAULT_CATALOGUE);
  const db = handle.db;
  const scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: SPEED, now: () => new Date() });
  if (phase === 'submit') {
    const today = new Date().toISOString().slice(0, 10);
    const owner = await createTenant(db, { name: 'Restart Drill University' });
    const staff = await createStaff(db, 'admin');
    const { allocationId } = await activeAllocation(db, owner, staff, { gpuHours: 5000, today });
    await db.update(allocations).set({ maxGpusAtOnce: 1000, maxQueuedJobs: 1000 }).where(eq(allocations.id, allocationId));
    const actor = await loadActor(db, owner.userId);
    const tenant = { ...actor!, org: { id: owner.orgId, name: owner.orgName, kind: 'academic' as const, status: 'active' as const }, role: 'owner' as const };
    let round = Promise.resolve();
    const timer = setInterval(() => {
      round = round.then(() => reconcileOnce(db, scheduler, new Date()).then(() => undefined));
    }, 100);
    for (let i = 0; i < JOBS; i++) {
      await submitJob(
        db,
        scheduler,
        tenant,
        { allocationId, resourceClassId: 'h100', name: `drill-${i}`, kind: i % 5 === 4 ? 'batch' : 'training', gpus: 8 * (1 + (i % 4)), nodes: 1 + (i % 4), walltimeSeconds: 3600 * (1 + (i % 3)), image: 'drill', command: 'sleep', env: {}, idempotencyKey: `drill-${i}-key` },
        new Date(),
      );
    }
    console.log(JSON.stringify({ submitted: JOBS }));
    // Keep reconciling until the test kills this process (SIGKILL: no cleanup at all).
    void timer;
    await new Promise(() => undefined);
  }
  // Resume: a new process, a new scheduler instance, the same database.
  const atResume = await db.select({ state: jobs.state, settledAt: jobs.settledAt }).from(jobs);
  const deadline = Date.now() + 60_000;
  let open = JOBS;
  while (Date.now() < deadline) {
    await reconcileOnce(db, scheduler, new Date());
    open = (await db.select({ id: jobs.id }).from(jobs).where(isNull(jobs.settledAt))).length;
    if (open === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const all = await db.select().from(jobs);
  const ids = all.map((j) => j.id);
  const entries = ids.length ? await db.select().from(ledgerEntries).where(and(inArray(ledgerEntries.jobId, ids))) : [];
  const perJob = ids.map((id) => {
    const mine = entries.filter((e) => e.jobId === id);
    return { reserve: mine.filter((e) => e.kind === 'reserve').length, release: mine.filter((e) => e.kind === 'release').length, charge: mine.filter((e) => e.kind === 'charge').length };
  });
  const allocationRows = await db.select().from(allocations);
  const balances = await Promise.all(allocationRows.map(async (a) => ({ cached: balanceOfRow(a), sums: await ledgerSums(db, a.id) })));
  const chargedOnJobs = all.reduce((s, j) => s + (j.chargedAmount ?? 0), 0);
  const chargedInLedger = entries.filter((e) => e.kind === 'charge').reduce((s, e) => s + e.amount, 0);
  console.log(
    JSON.stringify({
      jobs: all.length,
      open,
      settledBeforeResume: atResume.filter((j) => j.settledAt !== null).length,
      openStatesBeforeResume: atResume.filter((j) => j.settledAt === null).map((j) => j.state),
      states: all.map((j) => j.state),
      settled: all.filter((j) => j.settledAt !== null).length,
      perJob,
      balancesMatch: balances.every((b) => JSON.stringify(b.cached) === JSON.stringify(b.sums)),
      reservedLeft: allocationRows.reduce((s, a) => s + a.reserved, 0),
      chargedOnJobs,
      chargedInLedger,
    }),
  );
  await handle.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
