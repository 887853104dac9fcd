// Jobs end to end on the simulated cluster: exact charges settled exactly once, cancellation before
// and during a run, idempotent submission, every admission refusal (with nothing written), data
// residency, company credit lines and the monthly cap, tenancy of job records, and the end of an
// allocation's period with jobs queued and running — on PGlite and, when TEST_DATABASE_URL is set,
// on real Postgres. The clock is the test's: it moves only when a test moves it.
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { and, count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobEvents, jobs, ledgerEntries, resourceClasses } from '~/db/schema';
import { portalBaseUrl } from '~/server/env.js';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler, type SimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { appRouter } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import { chargeFor } from '~/server/core/jobs/estimates';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import type { ClusterConfig } from '~/server/core/sim';
import { AppError } from '~/server/errors';
import { translate } from '~/server/i18n';
import { exitWording } from '~/server/i18n/exit-wording';
import { createRestHandler } from '~/server/api/rest';
import { apiTokens } from '~/server/testing/api-tokens';
import { accountOf, activeAllocation, addMember, callerFor, confirmEmail, createStaff, createTenant, dbTargets, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';
import { loadCaller } from '~/server/services/identity/accounts';
import type { TenantActor } from '~/server/services/actor';
import { cancelJob, getJob, jobTargets, listJobs, submitJob, type SubmitJobInput } from './jobs';
import { balanceOfRow, expireDueAllocations, ledgerSums } from '~/server/services/ledger/ledger';
import { chooseTenant } from '~/server/services/tenants/organisations';
import { reconcileOnce, settleFinishedJob } from './reconciler';

const H = 3600;
const SPEED = 60;
const TODAY = '2026-12-01';
const START = '2026-12-01T10:00:00Z';

type Who = { userId: string; orgId: string };

describe.each(dbTargets())('jobs on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let cluster: ClusterConfig;
  let now = new Date(START);
  const clock = () => now;

  let admin: Awaited<ReturnType<typeof createStaff>>;
  /** Tenant A (academic): its owner is the PI of the main project. */
  let a: Awaited<ReturnType<typeof createTenant>>;
  let aProjectMember: Awaited<ReturnType<typeof addMember>>;
  let aOutsider: Awaited<ReturnType<typeof addMember>>;
  /** Tenant B (academic), with a project and allocation of its own. */
  let b: Awaited<ReturnType<typeof createTenant>>;
  let bMember: Awaited<ReturnType<typeof addMember>>;
  let main: Awaited<ReturnType<typeof activeAllocation>>;
  /** An allocation of A allowed to fill the whole h100 partition (128 GPUs at once). */
  let filler: Awaited<ReturnType<typeof activeAllocation>>;
  let bAlloc: Awaited<ReturnType<typeof activeAllocation>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    cluster = await clusterConfigFromCatalogue(db);
    admin = await createStaff(db, 'admin');
    a = await createTenant(db, { name: `Jena Jobs University ${randomUUID().slice(0, 6)}` });
    b = await createTenant(db, { name: `Kajaani Jobs Institute ${randomUUID().slice(0, 6)}` });
    aProjectMember = await addMember(db, a, 'member');
    aOutsider = await addMember(db, a, 'member');
    bMember = await addMember(db, b, 'member');
    main = await activeAllocation(db, a, admin, { gpuHours: 1000, today: TODAY });
    await asUser(a).project.setMember({ projectId: main.projectId, userId: aProjectMember.userId, role: 'member' });
    filler = await activeAllocation(db, a, admin, { gpuHours: 20_000, today: TODAY });
    await asUser(admin).staff.setAllocationLimits({ allocationId: filler.allocationId, maxGpusAtOnce: 128, maxWalltimeHours: 48, maxQueuedJobs: 50, reason: 'Fills the partition in tests' });
    bAlloc = await activeAllocation(db, b, admin, { gpuHours: 100, today: TODAY });
  });
  afterAll(async () => handle?.close());

  // ---- helpers ---------------------------------------------------------------------------------

  function asUser(who: { userId: string; orgId?: string }) {
    return callerFor(db, { userId: who.userId, orgId: who.orgId, now: clock });
  }

  /** The TenantActor the tRPC tenantProcedure would build for a user acting for a tenant. */
  async function actorOf(who: Who): Promise<TenantActor> {
    const caller = await loadCaller(db, who.userId);
    const resolved = caller ? chooseTenant(caller.tenants, who.orgId) : undefined;
    if (!caller || !resolved?.org) throw new Error(`no tenant actor for ${who.userId} in ${who.orgId}`);
    return { ...caller.actor, org: resolved.org, role: resolved.role };
  }

  /** A scheduler on a cluster of its own, so tests do not share GPUs. */
  function newScheduler(speed = SPEED): SimulatedScheduler {
    return createSimulatedScheduler({ db, cluster, speed, now: clock, clusterId: `jobs-test-${randomUUID().slice(0, 8)}` });
  }

  /** advance moves the wall clock by a number of simulated seconds at a speed. */
  function advance(simSeconds: number, speed = SPEED) {
    now = new Date(now.getTime() + (simSeconds * 1000) / speed);
  }

  function jobInput(allocationId: string, overrides: Partial<SubmitJobInput> = {}): SubmitJobInput {
    return {
      allocationId,
      resourceClassId: 'h100',
      name: 'train-resnet',
      kind: 'training',
      gpus: 4,
      nodes: 1,
      walltimeSeconds: H,
      image: 'nvcr.io/nvidia/pytorch:24.05-py3',
      command: 'torchrun train.py',
      env: {},
      idempotencyKey: randomUUID(),
      ...overrides,
    };
  }

  async function submit(scheduler: SchedulerPort, who: Who, input: SubmitJobInput) {
    return submitJob(db, scheduler, await actorOf(who), input, now);
  }

  async function jobRow(id: string) {
    const [row] = await db.select().from(jobs).where(eq(jobs.id, id));
    return row!;
  }

  async function allocationRow(id: string) {
    const [row] = await db.select().from(allocations).where(eq(allocations.id, id));
    return row!;
  }

  async function eventsOf(jobId: string) {
    return db.select().from(jobEvents).where(eq(jobEvents.jobId, jobId)).orderBy(jobEvents.id);
  }

  /** A job's ledger rows in order (a zero-amount charge, which changes no balance, is left out). */
  async function ledgerRowsOf(jobId: string) {
    const rows = await db.select().from(ledgerEntries).where(eq(ledgerEntries.jobId, jobId)).orderBy(ledgerEntries.id);
    return rows.filter((r) => !(r.kind === 'charge' && r.amount === 0));
  }

  async function expectLedgerConsistent(allocationId: string) {
    const row = await allocationRow(allocationId);
    expect(await ledgerSums(db, allocationId)).toEqual(balanceOfRow(row));
    return row;
  }

  async function rowCounts() {
    const [[j], [e], [l]] = await Promise.all([db.select({ n: count() }).from(jobs), db.select({ n: count() }).from(jobEvents), db.select({ n: count() }).from(ledgerEntries)]);
    return { jobs: j!.n, jobEvents: e!.n, ledgerEntries: l!.n };
  }

  /** settle advances the clock in steps and reconciles until the job is settled. */
  async function settle(scheduler: SchedulerPort, jobId: string, stepSimSeconds = 600, speed = SPEED) {
    for (let i = 0; i < 200; i++) {
      await reconcileOnce(db, scheduler, now);
      const row = await jobRow(jobId);
      if (row.settledAt) return row;
      advance(stepSimSeconds, speed);
    }
    throw new Error(`job ${jobId} never settled`);
  }

  /** A service refusal: the AppError and its English message. */
  async function refusal(promise: Promise<unknown>) {
    try {
      await promise;
    } catch (error) {
      if (error instanceof AppError) return { code: error.code, key: error.key, field: error.field, params: error.params, message: translate('en', error.key, error.params) };
      throw error;
    }
    throw new Error('expected the call to be refused');
  }

  /** A router refusal rendered the way the HTTP handler does: code, field messages and message. */
  async function routerRefusal(promise: Promise<unknown>) {
    try {
      await promise;
    } catch (error) {
      if (!(error instanceof TRPCError)) throw error;
      const shape = getErrorShape({ config: appRouter._def._config, error, type: 'mutation', path: 'job.submit', input: undefined, ctx: createContextInner({ db, locale: 'en' }) }) as {
        data: { fieldErrors?: Record<string, string> };
        message: string;
      };
      return { code: error.code, fields: shape.data.fieldErrors ?? {}, message: shape.message };
    }
    throw new Error('expected the call to be refused');
  }

  /** The router's submit input (minutes, not seconds). */
  function routerInput(allocationId: string, overrides: Record<string, unknown> = {}) {
    return { allocationId, resourceClassId: 'h100', name: 'train', kind: 'training' as const, gpus: 4, nodes: 1, walltimeMinutes: 60, image: 'nvcr.io/nvidia/pytorch:24.05-py3', command: 'torchrun train.py', env: {}, idempotencyKey: randomUUID(), ...overrides };
  }

  // ---- 1. exact charge ------------------------------------------------------------------------

  let firstJobId = '';
  let firstScheduler: SimulatedScheduler | undefined;

  it('charges a finished job exactly its GPUs × run time, at the tariff, and records energy and site', async () => {
    const scheduler = (firstScheduler = newScheduler());
    const before = await allocationRow(main.allocationId);
    const job = await submit(scheduler, a, jobInput(main.allocationId, { gpus: 4, walltimeSeconds: H }));
    firstJobId = job.id;
    expect(job).toMatchObject({ state: 'PENDING', reservedUnit: 'gpu_seconds', reservedAmount: 4 * H, centsPerGpuHour: 180, siteId: 'de-jena' });
    expect(job.schedulerJobId).toMatch(/^sim-/);
    expect((await allocationRow(main.allocationId)).reserved).toBe(before.reserved + 4 * H);

    const runtime = job.simulation!.runtimeSeconds;
    expect(runtime).toBeGreaterThan(0);
    expect(runtime).toBeLessThan(H);
    const done = await settle(scheduler, job.id);

    expect(done).toMatchObject({ state: 'COMPLETED', exitCode: 0, siteId: 'de-jena', energyMeasured: false });
    expect(done.gpuSeconds).toBe(4 * runtime);
    expect(done.chargedAmount).toBe(4 * runtime);
    expect(done.costCents).toBe(chargeFor({ unit: 'cents', gpuSeconds: 4 * runtime, centsPerGpuHour: 180 }));
    expect(done.costCents).toBe(Math.round((4 * runtime * 180) / H));
    expect(done.energyWh).toBeGreaterThan(0);
    expect(done.nodeList).toHaveLength(1);
    expect(done.endedAt!.getTime() - done.startedAt!.getTime()).toBe(Math.round((runtime * 1000) / SPEED));

    const events = await eventsOf(job.id);
    expect(events.map((e) => [e.state, e.message])).toEqual([
      ['SUBMITTING', 'job.event.submitted'],
      ['PENDING', 'job.event.queued'],
      ['RUNNING', 'job.event.started'],
      ['COMPLETED', 'job.event.finished'],
      ['COMPLETED', 'job.event.settled'],
    ]);

    const after = await expectLedgerConsistent(main.allocationId);
    expect(after.charged).toBe(before.charged + 4 * runtime);
    expect(after.reserved).toBe(before.reserved);
    expect(after.overrun).toBe(before.overrun);
    const rows = await ledgerRowsOf(job.id);
    expect(rows.map((r) => [r.kind, r.amount])).toEqual([
      ['reserve', 4 * H],
      ['release', 4 * H],
      ['charge', 4 * runtime],
    ]);
  });

  // ---- 2. exactly once ------------------------------------------------------------------------

  it('a job submitted with begin is stored with it, waits with BeginTime and starts no earlier; a begin out of range is refused', async () => {
    const scheduler = newScheduler();
    const begin = new Date(now.getTime() + 10 * 60_000); // 10 wall minutes ahead
    const job = await submit(scheduler, a, jobInput(main.allocationId, { gpus: 1, walltimeSeconds: H, begin: begin.toISOString() }));
    expect(job.beginAt?.toISOString()).toBe(begin.toISOString());
    expect(job).toMatchObject({ state: 'PENDING' });
    await reconcileOnce(db, scheduler, now);
    expect(await jobRow(job.id)).toMatchObject({ state: 'PENDING', pendingReason: 'BeginTime' });
    const done = await settle(scheduler, job.id);
    expect(done.startedAt!.getTime()).toBeGreaterThanOrEqual(begin.getTime());

    expect(await refusal(submit(scheduler, a, jobInput(main.allocationId, { begin: new Date(now.getTime() - 2 * 60_000).toISOString() })))).toMatchObject({ key: 'job.beginOutOfRange', field: 'begin' });
    expect(await refusal(submit(scheduler, a, jobInput(main.allocationId, { begin: new Date(now.getTime() + 31 * 86_400_000).toISOString() })))).toMatchObject({ key: 'job.beginOutOfRange', field: 'begin' });
    expect(await routerRefusal(asUser(a).job.submit(routerInput(main.allocationId, { begin: 'tomorrow' })))).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('keeps the estimate shown before submitting with the job, and no estimate as none', async () => {
    const scheduler = newScheduler();
    const estimate = { runtimeSeconds: 1200, maxCostCents: 720, note: 'ä "quoted"' };
    const withEstimate = await submit(scheduler, a, jobInput(main.allocationId, { gpus: 1, estimate }));
    const without = await submit(scheduler, a, jobInput(main.allocationId, { gpus: 1 }));
    expect(withEstimate.estimate).toEqual(estimate);
    expect(without.estimate).toBeNull();
    // Stored as JSON and as SQL NULL (not a JSON null), as they were read back.
    const [stored] = await db.select({ kind: sql<string>`jsonb_typeof(${jobs.estimate})`, missing: sql<boolean>`${jobs.estimate} is null` }).from(jobs).where(eq(jobs.id, withEstimate.id));
    const [none] = await db.select({ missing: sql<boolean>`${jobs.estimate} is null` }).from(jobs).where(eq(jobs.id, without.id));
    expect(stored).toEqual({ kind: 'object', missing: false });
    expect(none).toEqual({ missing: true });
    expect((await jobRow(withEstimate.id)).estimate).toEqual(estimate);
    for (const id of [withEstimate.id, without.id]) await cancelJob(db, scheduler, await actorOf(a), id, now);
  });

  it('settles exactly once: more rounds and a repeated settlement change nothing', async () => {
    expect(firstJobId).not.toBe('');
    const scheduler = firstScheduler!;
    const settled = await jobRow(firstJobId);
    const allocationBefore = await allocationRow(main.allocationId);
    const eventsBefore = await eventsOf(firstJobId);
    for (let i = 0; i < 5; i++) {
      advance(600);
      const round = await reconcileOnce(db, scheduler, now);
      expect(round.settled).toBe(0);
    }
    const [status] = await scheduler.jobs([firstJobId]);
    expect(status?.state).toBe('COMPLETED');
    expect(await settleFinishedJob(db, settled, status!, now)).toBe(false);
    expect(await settleFinishedJob(db, await jobRow(firstJobId), status!, now)).toBe(false);

    expect(await jobRow(firstJobId)).toEqual(settled);
    expect(await eventsOf(firstJobId)).toEqual(eventsBefore);
    const rows = await ledgerRowsOf(firstJobId);
    expect(rows.filter((r) => r.kind === 'charge')).toHaveLength(1);
    expect(rows.filter((r) => r.kind === 'release')).toHaveLength(1);
    expect(rows.filter((r) => r.kind === 'reserve')).toHaveLength(1);
    const allocationAfter = await expectLedgerConsistent(main.allocationId);
    expect(balanceOfRow(allocationAfter)).toEqual(balanceOfRow(allocationBefore));
  });

  // ---- 3. cancellation ------------------------------------------------------------------------

  it('cancels a queued job without charge and a running one with a partial charge', async () => {
    const scheduler = newScheduler();
    const mainBefore = await allocationRow(main.allocationId);
    const fillerBefore = await allocationRow(filler.allocationId);
    // The whole h100 partition (16 nodes × 8 GPUs) is taken, so the next job waits.
    const big = await submit(scheduler, a, jobInput(filler.allocationId, { gpus: 128, nodes: 16, walltimeSeconds: 2 * H }));
    const queued = await submit(scheduler, a, jobInput(main.allocationId, { gpus: 4, walltimeSeconds: H }));
    await reconcileOnce(db, scheduler, now);
    expect((await jobRow(big.id)).state).toBe('RUNNING');
    expect(await jobRow(queued.id)).toMatchObject({ state: 'PENDING', pendingReason: expect.any(String) as string });

    expect(await cancelJob(db, scheduler, await actorOf(a), queued.id, now)).toEqual({ state: 'PENDING' });
    expect((await jobRow(queued.id)).cancelRequestedAt).not.toBeNull();
    await reconcileOnce(db, scheduler, now);
    const cancelled = await jobRow(queued.id);
    expect(cancelled).toMatchObject({ state: 'CANCELLED', gpuSeconds: 0, chargedAmount: 0, costCents: 0, startedAt: null, exitCode: null, exitSignal: null });
    expect(cancelled.settledAt).not.toBeNull();
    expect((await ledgerRowsOf(queued.id)).map((r) => [r.kind, r.amount])).toEqual([
      ['reserve', 4 * H],
      ['release', 4 * H],
    ]);
    const mainAfter = await expectLedgerConsistent(main.allocationId);
    expect(mainAfter.reserved).toBe(mainBefore.reserved);
    expect(mainAfter.charged).toBe(mainBefore.charged);
    // Cancelling again is harmless.
    expect(await cancelJob(db, scheduler, await actorOf(a), queued.id, now)).toEqual({ state: 'CANCELLED' });

    // The running job, cancelled after exactly 600 simulated seconds, pays for 128 GPUs × 600 s.
    advance(600);
    await cancelJob(db, scheduler, await actorOf(a), big.id, now);
    await reconcileOnce(db, scheduler, now);
    const stopped = await jobRow(big.id);
    // Ended as Slurm ends a cancelled running job: its batch script by SIGTERM (0:15).
    expect(stopped).toMatchObject({ state: 'CANCELLED', gpuSeconds: 128 * 600, chargedAmount: 128 * 600, exitCode: 0, exitSignal: 15 });
    expect(stopped.costCents).toBe(chargeFor({ unit: 'cents', gpuSeconds: 128 * 600, centsPerGpuHour: 180 }));
    const fillerAfter = await expectLedgerConsistent(filler.allocationId);
    expect(fillerAfter.charged).toBe(fillerBefore.charged + 128 * 600);
    expect(fillerAfter.reserved).toBe(fillerBefore.reserved);
    expect((await eventsOf(big.id)).map((e) => e.message)).toEqual(['job.event.submitted', 'job.event.queued', 'job.event.started', 'job.event.cancelRequested', 'job.event.finished', 'job.event.settled']);
  });

  it('stops an inference service as COMPLETED, charged for the time it served, and shows its footprint in cluster time', async () => {
    const scheduler = newScheduler();
    const before = await allocationRow(main.allocationId);
    const service = await submit(scheduler, a, jobInput(main.allocationId, { kind: 'inference', name: 'llm-endpoint', gpus: 2, walltimeSeconds: 4 * H }));
    await reconcileOnce(db, scheduler, now);
    expect((await jobRow(service.id)).state).toBe('RUNNING');
    advance(1800);
    await reconcileOnce(db, scheduler, now);
    const serving = await asUser(a).job.get({ jobId: service.id });
    expect(serving.state).toBe('RUNNING');
    // Its model at the portal's gateway, named after the job (none was given).
    expect(serving.inference?.endpointUrl).toBe(`${portalBaseUrl()}/api/v1/openai/v1`);
    expect(serving.inference?.model).toBe('llm-endpoint');
    // Its traffic is the calls the gateway settled on it (openai-gateway tests make some): none here.
    expect(serving.inference).toMatchObject({ requests: 0, tokens: 0 });
    expect(serving.efficiency?.runSeconds).toBe(1800);
    expect(serving.costSoFarCents).toBe(chargeFor({ unit: 'cents', gpuSeconds: 2 * 1800, centsPerGpuHour: service.centsPerGpuHour }));

    advance(1800);
    await cancelJob(db, scheduler, await actorOf(a), service.id, now);
    await reconcileOnce(db, scheduler, now);
    const stopped = await jobRow(service.id);
    expect(stopped).toMatchObject({ state: 'COMPLETED', exitCode: 0, exitSignal: null, gpuSeconds: 2 * 3600, chargedAmount: 2 * 3600 });
    expect(stopped.settledAt).not.toBeNull();
    expect((await eventsOf(service.id)).map((e) => [e.state, e.message])).toEqual([
      ['SUBMITTING', 'job.event.submitted'],
      ['PENDING', 'job.event.queued'],
      ['RUNNING', 'job.event.started'],
      ['RUNNING', 'job.event.stopRequested'],
      ['COMPLETED', 'job.event.finished'],
      ['COMPLETED', 'job.event.settled'],
    ]);
    const after = await expectLedgerConsistent(main.allocationId);
    expect(after.charged).toBe(before.charged + 2 * 3600);
    expect(after.reserved).toBe(before.reserved);

    // The page's figures are the ones frozen at settlement; the run time is GPU-seconds ÷ GPUs.
    const page = await asUser(a).job.get({ jobId: service.id });
    expect(page).toMatchObject({ resourceClassName: expect.any(String) as string, siteName: expect.any(String) as string, costSoFarCents: stopped.costCents, facilityEnergyWh: stopped.facilityEnergyWh });
    expect(page.resourceClassName).not.toBe('h100');
    // In German the class and site are named in German (the catalogue gives both).
    expect({ resourceClassName: page.resourceClassName, siteName: page.siteName }).toEqual({ resourceClassName: 'H100 partition (Jena)', siteName: 'Jena, Germany (warm-water cooled)' });
    const pageDe = await callerFor(db, { userId: a.userId, orgId: a.orgId, locale: 'de', now: clock }).job.get({ jobId: service.id });
    expect({ resourceClassName: pageDe.resourceClassName, siteName: pageDe.siteName }).toEqual({ resourceClassName: 'H100-Partition (Jena)', siteName: 'Jena, Deutschland (Warmwasserkühlung)' });
    const targetsDe = await callerFor(db, { userId: a.userId, orgId: a.orgId, locale: 'de', now: clock }).job.targets();
    expect(targetsDe.resourceClasses.find((c) => c.id === 'h100')).toMatchObject({ name: 'H100-Partition (Jena)', siteName: 'Jena, Deutschland (Warmwasserkühlung)' });
    expect(page.efficiency).toEqual({ runSeconds: 3600, walltimeUsedPercent: 25, meanGpuUtilPercent: 45 });
    expect(page.site?.pueMilli).toBeGreaterThan(1000);
    expect(stopped.facilityEnergyWh).toBe(Math.floor((2 * stopped.energyWh! * page.site!.pueMilli + 1000) / 2000));
  });

  it('settles a job past its walltime TIMEOUT with exit code 0 and signal 15, as the page, its log and the REST API show', async () => {
    const scheduler = newScheduler();
    // A service is never stopped here: it runs into its walltime.
    const service = await submit(scheduler, a, jobInput(main.allocationId, { kind: 'inference', name: 'left-running', gpus: 1, walltimeSeconds: 600 }));
    const done = await settle(scheduler, service.id, 300);
    expect(done).toMatchObject({ state: 'TIMEOUT', exitCode: 0, exitSignal: 15, gpuSeconds: 600, chargedAmount: 600 });
    expect((await eventsOf(service.id)).find((e) => e.message === 'job.event.finished')?.data).toEqual({ exitCode: 0, exitSignal: 15 });

    const page = await callerFor(db, { userId: a.userId, orgId: a.orgId, now: clock, scheduler }).job.get({ jobId: service.id });
    const exitStatus = { kind: 'signal', exitCode: 0, signal: 15, signalName: 'SIGTERM', slurm: '0:15' };
    expect(page).toMatchObject({ state: 'TIMEOUT', exitCode: 0, exitSignal: 15, exitStatus });
    const words = exitWording(page.exitStatus);
    expect(translate('en', words.key, words.params)).toBe('Ended by signal 15 (SIGTERM) (Slurm 0:15)');
    expect(translate('de', words.key, words.params)).toBe('Durch Signal 15 (SIGTERM) beendet (Slurm 0:15)');
    // The log's last line, as the simulated cluster wrote it into the job's stdout.log (stamped with its time).
    expect(page.output.at(-1)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[portal\] walltime reached, the job was stopped \(TIMEOUT\): signal 15 \(SIGTERM\), Slurm 0:15$/);

    const tokens = apiTokens(db);
    const rest = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 1000, scheduler });
    const response = await rest(new Request(`http://portal.test/api/v1/jobs/${service.id}`, { headers: { authorization: `Bearer ${await tokens.mint(a, ['read'])}` } }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ state: 'TIMEOUT', exitCode: 0, exitSignal: 15, exitStatus });
  });

  it('settles a job the scheduler preempted as PREEMPTED, charged what it ran, its reservation released', async () => {
    const sim = newScheduler();
    let preemptedAt: Date | null = null;
    // Slurm with preemption (PreemptMode=CANCEL): from `preemptedAt` on, the running job is reported PREEMPTED.
    const preempting: SchedulerPort = {
      ...sim,
      jobs: async (ids) =>
        (await sim.jobs(ids)).map((s) => (preemptedAt && s.state === 'RUNNING' ? { ...s, state: 'PREEMPTED' as const, endedAt: preemptedAt, exitCode: 0, signal: 15 } : s)),
    };
    const before = await allocationRow(main.allocationId);
    const job = await submit(preempting, a, jobInput(main.allocationId, { kind: 'inference', name: 'preempted', gpus: 2, walltimeSeconds: 2 * H }));
    await reconcileOnce(db, preempting, now);
    expect((await jobRow(job.id)).state).toBe('RUNNING');
    advance(1200);
    preemptedAt = now;
    await reconcileOnce(db, preempting, now);

    const row = await jobRow(job.id);
    expect(row).toMatchObject({ state: 'PREEMPTED', gpuSeconds: 2 * 1200, chargedAmount: 2 * 1200, exitCode: 0, exitSignal: 15, endedAt: preemptedAt });
    expect(row.settledAt).not.toBeNull();
    expect((await ledgerRowsOf(job.id)).map((r) => [r.kind, r.amount])).toEqual([
      ['reserve', 2 * 2 * H],
      ['release', 2 * 2 * H],
      ['charge', 2 * 1200],
    ]);
    const after = await expectLedgerConsistent(main.allocationId);
    expect(after.charged).toBe(before.charged + 2 * 1200);
    expect(after.reserved).toBe(before.reserved);
    expect((await eventsOf(job.id)).map((e) => [e.state, e.message]).slice(-2)).toEqual([
      ['PREEMPTED', 'job.event.finished'],
      ['PREEMPTED', 'job.event.settled'],
    ]);
    // Shown and listed as ended, not hidden.
    const caller = asUser(a);
    expect((await caller.job.get({ jobId: job.id })).state).toBe('PREEMPTED');
    expect((await caller.job.list({ status: 'finished', limit: 500 })).map((j) => j.id)).toContain(job.id);
    expect((await caller.job.list({ status: 'active', limit: 500 })).map((j) => j.id)).not.toContain(job.id);
    expect(translate('de', 'jobState.PREEMPTED')).toBe('Verdrängt');
  });

  it('cancels a job the scheduler never received at once, releasing its whole reservation', async () => {
    const good = newScheduler();
    const broken: SchedulerPort = {
      ...good,
      submit: () => Promise.reject(new Error('slurmrestd unreachable')),
    };
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const before = await allocationRow(main.allocationId);
    let job;
    try {
      job = await submit(broken, a, jobInput(main.allocationId, { gpus: 2, walltimeSeconds: 2 * H }));
    } finally {
      quiet.mockRestore();
    }
    expect(job.state).toBe('SUBMITTING');
    expect((await allocationRow(main.allocationId)).reserved).toBe(before.reserved + 2 * 2 * H);
    expect(await cancelJob(db, good, await actorOf(a), job.id, now)).toEqual({ state: 'CANCELLED' });
    await reconcileOnce(db, good, now);
    expect(await jobRow(job.id)).toMatchObject({ state: 'CANCELLED', gpuSeconds: 0, chargedAmount: 0, schedulerJobId: null });
    expect(await good.jobs([job.id])).toEqual([]);
    expect((await ledgerRowsOf(job.id)).map((r) => r.kind)).toEqual(['reserve', 'release']);
    const after = await expectLedgerConsistent(main.allocationId);
    expect(balanceOfRow(after)).toEqual(balanceOfRow(before));
  });

  it('stops a cancelled job at the scheduler even when the reply to its hand-over was lost', async () => {
    const good = newScheduler();
    // The scheduler accepts the job, but the reply never arrives (a timeout): the portal keeps it SUBMITTING.
    const lossy: SchedulerPort = {
      ...good,
      submit: async (spec) => {
        await good.submit(spec);
        throw new Error('timeout waiting for slurmrestd');
      },
    };
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    let job;
    try {
      job = await submit(lossy, a, jobInput(main.allocationId, { gpus: 2, walltimeSeconds: H }));
    } finally {
      quiet.mockRestore();
    }
    expect(job.state).toBe('SUBMITTING');
    expect((await good.jobs([job.id]))[0]?.state).toBe('RUNNING');

    await cancelJob(db, good, await actorOf(a), job.id, now);
    await reconcileOnce(db, good, now);
    advance(600);
    await reconcileOnce(db, good, now);
    // The portal says CANCELLED with nothing charged: the GPUs must not go on being used.
    const cancelled = await jobRow(job.id);
    expect(cancelled.state).toBe('CANCELLED');
    await expectLedgerConsistent(main.allocationId);
    const [atScheduler] = await good.jobs([job.id]);
    await good.cancel(job.id); // stop it whatever the assertion below finds
    expect(atScheduler?.state, 'state at the scheduler of a job the portal cancelled').not.toBe('RUNNING');
    expect(cancelled.chargedAmount, 'what the portal charged for the GPU-seconds the scheduler reports').toBe(atScheduler?.gpuSeconds ?? 0);
  });

  // ---- 4. idempotency -------------------------------------------------------------------------

  it('returns the first job for a repeated or concurrent submission with the same key', async () => {
    const scheduler = newScheduler();
    const key = `double-click-${randomUUID()}`;
    const first = await submit(scheduler, a, jobInput(main.allocationId, { idempotencyKey: key }));
    const again = await submit(scheduler, a, jobInput(main.allocationId, { idempotencyKey: key }));
    expect(again.id).toBe(first.id);

    const raceKey = `retry-${randomUUID()}`;
    const actor = await actorOf(a);
    const racing = await Promise.all(Array.from({ length: 4 }, () => submitJob(db, scheduler, actor, jobInput(main.allocationId, { idempotencyKey: raceKey }), now)));
    expect(new Set(racing.map((j) => j.id)).size).toBe(1);

    // The same race through the API: each request runs in its tenant transaction, the losers wait on the
    // key's unique index, fail, run again and answer with the first job.
    const apiKey = `api-retry-${randomUUID()}`;
    const { walltimeSeconds, ...fields } = jobInput(main.allocationId, { idempotencyKey: apiKey });
    const viaApi = await Promise.all(Array.from({ length: 4 }, () => callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler, now: () => now }).job.submit({ ...fields, kind: 'training', walltimeMinutes: walltimeSeconds / 60 })));
    expect(new Set(viaApi.map((j) => j.id)).size).toBe(1);

    for (const k of [key, raceKey, apiKey]) {
      const rows = await db.select().from(jobs).where(and(eq(jobs.userId, a.userId), eq(jobs.idempotencyKey, k)));
      expect(rows).toHaveLength(1);
      const entries = await ledgerRowsOf(rows[0]!.id);
      expect(entries.filter((r) => r.kind === 'reserve')).toHaveLength(1);
      expect((await eventsOf(rows[0]!.id)).filter((e) => e.message === 'job.event.submitted')).toHaveLength(1);
      expect(await scheduler.jobs([rows[0]!.id])).toHaveLength(1);
    }
    await expectLedgerConsistent(main.allocationId);
    // Leave nothing running for later tests.
    for (const id of [first.id, racing[0]!.id, viaApi[0]!.id]) await cancelJob(db, scheduler, actor, id, now);
    await reconcileOnce(db, scheduler, now);
  });

  it('refuses the same key with another body (422, naming the key), also racing; after 24 hours the key makes a new job', async () => {
    const scheduler = newScheduler();
    const actor = await actorOf(a);
    const key = `reused-${randomUUID()}`;
    const first = await submit(scheduler, a, jobInput(main.allocationId, { idempotencyKey: key, gpus: 1 }));
    const before = await rowCounts();
    // The same key, another body: refused on the key, nothing written.
    const reused = await refusal(submit(scheduler, a, jobInput(main.allocationId, { idempotencyKey: key, gpus: 2 })));
    expect(reused).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', key: 'job.idempotencyKeyReused', field: 'idempotencyKey', params: { key } });
    expect(reused.message).toContain(key);
    expect(await rowCounts()).toEqual(before);
    // Through the API: 422 with its own reason, in the caller's words.
    const { walltimeSeconds, ...fields } = jobInput(main.allocationId, { idempotencyKey: key, gpus: 2 });
    const viaApi = await routerRefusal(callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler, now: () => now }).job.submit({ ...fields, kind: 'training', walltimeMinutes: walltimeSeconds / 60 }));
    expect(viaApi.code).toBe('UNPROCESSABLE_CONTENT');
    expect(viaApi.message).toContain(key);
    // The same body again still answers the first job.
    expect((await submit(scheduler, a, jobInput(main.allocationId, { idempotencyKey: key, gpus: 1 }))).id).toBe(first.id);

    // Racing with one key, two bodies, through the API (each in its tenant transaction): one job; every
    // request with its body answers it, every other is refused on the key.
    const raceKey = `race-two-bodies-${randomUUID()}`;
    const bodyOf = (gpus: number) => {
      const { walltimeSeconds: w, ...rest } = jobInput(main.allocationId, { idempotencyKey: raceKey, gpus, name: 'race' });
      return { ...rest, kind: 'training' as const, walltimeMinutes: w / 60 };
    };
    const outcomes = await Promise.allSettled([1, 2, 1, 2, 1, 2].map((gpus) => callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler, now: () => now }).job.submit(bodyOf(gpus)).then((job) => ({ job, gpus }))));
    const answered = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as { code?: string; message?: string }] : []));
    expect(new Set(answered.map((x) => x.job.id)).size).toBe(1);
    expect(new Set(answered.map((x) => x.gpus)).size).toBe(1);
    expect(answered).toHaveLength(3);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r.code).toBe('UNPROCESSABLE_CONTENT');
    const raced = await db.select().from(jobs).where(and(eq(jobs.userId, a.userId), eq(jobs.idempotencyKey, raceKey)));
    expect(raced).toHaveLength(1);
    expect(raced[0]!.gpus).toBe(answered[0]!.gpus);

    // 24 hours later the key is free: another body makes a new job, and the old job keeps its key under a name no request can send.
    const later = new Date(now.getTime() + 24 * 3_600_000);
    const renewed = await submitJob(db, scheduler, actor, jobInput(main.allocationId, { idempotencyKey: key, gpus: 2 }), later);
    expect(renewed.id).not.toBe(first.id);
    expect(renewed.gpus).toBe(2);
    expect((await jobRow(first.id)).idempotencyKey).toBe(`${key} expired ${first.id}`);
    // …and from then on answers with the new job.
    expect((await submitJob(db, scheduler, actor, jobInput(main.allocationId, { idempotencyKey: key, gpus: 2 }), later)).id).toBe(renewed.id);
    // The same through the API, in the tenant's own transaction (its role may release a key, nothing else of the row).
    const apiKey = `api-expiry-${randomUUID()}`;
    const asOwnerAt = (at: Date) => callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler, now: () => at });
    const bodyWith = (gpus: number) => {
      const { walltimeSeconds: w, ...rest } = jobInput(main.allocationId, { idempotencyKey: apiKey, gpus });
      return { ...rest, kind: 'training' as const, walltimeMinutes: w / 60 };
    };
    const apiFirst = await asOwnerAt(now).job.submit(bodyWith(1));
    const apiRenewed = await asOwnerAt(later).job.submit(bodyWith(2));
    expect(apiRenewed.id).not.toBe(apiFirst.id);
    expect((await jobRow(apiFirst.id)).idempotencyKey).toBe(`${apiKey} expired ${apiFirst.id}`);
    await expectLedgerConsistent(main.allocationId);
    for (const id of [first.id, raced[0]!.id, renewed.id, apiFirst.id, apiRenewed.id]) await cancelJob(db, scheduler, actor, id, later);
    await reconcileOnce(db, scheduler, later);
  });

  // ---- 5. admission refusals ------------------------------------------------------------------

  it('refuses bad input at the API on the right field, writing nothing', async () => {
    const before = await rowCounts();
    const zero = await routerRefusal(asUser(a).job.submit(routerInput(main.allocationId, { gpus: 0 })));
    expect(zero.code).toBe('BAD_REQUEST');
    expect(Object.keys(zero.fields)).toEqual(['gpus']);
    expect(zero.fields.gpus).toMatch(/at least 1/);

    const huge = await routerRefusal(asUser(a).job.submit(routerInput(main.allocationId, { command: 'x'.repeat(10 * 1024 * 1024) })));
    expect(huge.code).toBe('BAD_REQUEST');
    expect(Object.keys(huge.fields)).toEqual(['command']);
    expect(huge.fields.command).toMatch(/at most 100,?000 characters/);
    expect(await rowCounts()).toEqual(before);
  });

  it('refuses jobs that break a partition limit, naming the limit and the amount', async () => {
    const scheduler = newScheduler();
    const before = await rowCounts();

    const perNode = await refusal(submit(scheduler, a, jobInput(main.allocationId, { gpus: 9, nodes: 1 })));
    expect(perNode).toMatchObject({ code: 'BAD_REQUEST', field: 'gpus', key: 'job.tooManyGpusPerNode' });
    expect(perNode.message).toBe('A node has 8 GPUs, but the job asks for 9 per node. Use at least 2 nodes.');

    const uneven = await refusal(submit(scheduler, a, jobInput(main.allocationId, { gpus: 6, nodes: 4 })));
    expect(uneven).toMatchObject({ code: 'BAD_REQUEST', field: 'gpus', key: 'job.gpusNotDivisible' });
    expect(uneven.message).toMatch(/^6 GPUs cannot be spread evenly over 4 nodes/);

    const tooManyNodes = await refusal(submit(scheduler, a, jobInput(main.allocationId, { gpus: 17, nodes: 17 })));
    expect(tooManyNodes).toMatchObject({ code: 'BAD_REQUEST', field: 'nodes', key: 'job.tooManyNodes' });
    expect(tooManyNodes.message).toBe('The partition has 16 nodes; the job asks for 17.');

    const long = await refusal(submit(scheduler, a, jobInput(main.allocationId, { walltimeSeconds: 49 * H })));
    expect(long).toMatchObject({ code: 'BAD_REQUEST', field: 'walltimeMinutes', key: 'job.walltimeOverPartition' });
    expect(long.message).toBe("The walltime of 49 h is over the partition's limit of 48 h by 1 h.");

    const unknown = await refusal(submit(scheduler, a, jobInput(main.allocationId, { resourceClassId: 'a100' })));
    expect(unknown).toMatchObject({ code: 'BAD_REQUEST', field: 'resourceClassId', key: 'job.unknownClass' });
    expect(unknown.message).toMatch(/a100 does not exist/);

    const otherClass = await refusal(submit(scheduler, a, jobInput(main.allocationId, { resourceClassId: 'b200' })));
    expect(otherClass).toMatchObject({ code: 'BAD_REQUEST', field: 'resourceClassId', key: 'job.classNotInAllocation' });

    expect(await rowCounts()).toEqual(before);
  });

  it("refuses jobs over the allocation's limits: walltime per job, GPUs at once, queued jobs", async () => {
    const scheduler = newScheduler();
    const limited = await activeAllocation(db, a, admin, { gpuHours: 500, today: TODAY });
    const staff = asUser(admin);
    await staff.staff.setAllocationLimits({ allocationId: limited.allocationId, maxGpusAtOnce: 8, maxWalltimeHours: 12, maxQueuedJobs: 50, reason: 'Fair use during the test' });
    const running = await submit(scheduler, a, jobInput(limited.allocationId, { gpus: 4, walltimeSeconds: 2 * H }));
    expect(running.state).toBe('PENDING');
    const before = await rowCounts();
    // The estimate warns of the GPUs-at-once limit before submitting: 4 in use, 4 more fit.
    const estimate = await asUser(a).job.estimate({ allocationId: limited.allocationId, resourceClassId: 'h100', gpus: 8, nodes: 1, walltimeMinutes: 60 });
    expect(estimate.room.gpusAtOnce).toEqual({ limit: 8, inUse: 4 });
    expect(estimate.shortfalls).toEqual([{ limit: 'gpusAtOnce', limitGpus: 8, inUseGpus: 4, requestedGpus: 8, maxGpus: 4 }]);

    const long = await refusal(submit(scheduler, a, jobInput(limited.allocationId, { gpus: 1, walltimeSeconds: 13 * H })));
    expect(long).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'walltimeMinutes', key: 'job.walltimeOverAllocation' });
    expect(long.message).toBe("The walltime of 13 h is over the allocation's limit of 12 h per job by 1 h.");

    const wide = await refusal(submit(scheduler, a, jobInput(limited.allocationId, { gpus: 8, walltimeSeconds: H })));
    expect(wide).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'gpus', key: 'job.gpusAtOnce' });
    expect(wide.message).toBe('The allocation allows 8 GPUs at once; 4 are in use or queued, so 8 more would exceed it by 4.');
    expect(await rowCounts()).toEqual(before);

    // One job queued (PENDING in the portal), one allowed.
    await staff.staff.setAllocationLimits({ allocationId: limited.allocationId, maxGpusAtOnce: 64, maxWalltimeHours: 12, maxQueuedJobs: 1, reason: 'One queued job at a time' });
    const queuedNow = await db.select({ n: count() }).from(jobs).where(and(eq(jobs.allocationId, limited.allocationId), eq(jobs.state, 'PENDING')));
    expect(queuedNow[0]!.n).toBe(1);
    const many = await refusal(submit(scheduler, a, jobInput(limited.allocationId, { gpus: 1, walltimeSeconds: H })));
    expect(many).toMatchObject({ code: 'PRECONDITION_FAILED', field: undefined, key: 'job.queuedJobs' });
    expect(many.message).toMatch(/allows 1 queued job at once/);
    expect(await rowCounts()).toEqual(before);

    await cancelJob(db, scheduler, await actorOf(a), running.id, now);
    await reconcileOnce(db, scheduler, now);
    await expectLedgerConsistent(limited.allocationId);
  });

  it('refuses people outside the project and allocations of other tenants', async () => {
    const scheduler = newScheduler();
    const before = await rowCounts();

    const outsider = await refusal(submit(scheduler, aOutsider, jobInput(main.allocationId)));
    expect(outsider).toMatchObject({ code: 'FORBIDDEN', field: 'allocationId', key: 'job.notInProject' });

    const otherTenant = await refusal(submit(scheduler, b, jobInput(main.allocationId)));
    expect(otherTenant).toMatchObject({ code: 'NOT_FOUND', field: 'allocationId', key: 'job.unknownAllocation' });

    const backwards = await refusal(submit(scheduler, a, jobInput(bAlloc.allocationId)));
    expect(backwards).toMatchObject({ code: 'NOT_FOUND', key: 'job.unknownAllocation' });

    expect(await rowCounts()).toEqual(before);
  });

  it('refuses tenants that are pending verification or suspended', async () => {
    const scheduler = newScheduler();
    const pending = await createTenant(db, { kind: 'company', name: `Pending Robotics GmbH ${randomUUID().slice(0, 6)}` });
    const pendingProject = await asUser(pending).project.create({ title: 'Warehouse robots', abstract: 'Training grasping policies on GPUs.', workloadKind: 'training', members: [] });
    const credit = await asUser(admin).staff.grantCreditLine({ projectId: pendingProject.id, amountEuros: 1000, periodStart: TODAY, periodEnd: '2027-06-01', reason: 'Contract signed before verification' });

    const suspended = await createTenant(db, { name: `Suspended College ${randomUUID().slice(0, 6)}` });
    const suspendedAlloc = await activeAllocation(db, suspended, admin, { gpuHours: 100, today: TODAY });
    await asUser(admin).staff.changeTenantStatus({ orgId: suspended.orgId, action: 'suspend', reason: 'Acceptable use policy breach' });

    const before = await rowCounts();
    const notYet = await refusal(submit(scheduler, pending, jobInput(credit.id)));
    expect(notYet).toMatchObject({ code: 'FORBIDDEN', key: 'job.tenantPending' });
    expect(notYet.message).toMatch(/awaits verification/);

    const stopped = await refusal(submit(scheduler, suspended, jobInput(suspendedAlloc.allocationId)));
    expect(stopped).toMatchObject({ code: 'FORBIDDEN', key: 'job.tenantSuspended' });
    // The API refuses a suspended tenant's mutation before it looks at the input or the scheduler.
    const viaApi = await routerRefusal(asUser(suspended).job.submit(routerInput(suspendedAlloc.allocationId)));
    expect(viaApi.code).toBe('FORBIDDEN');
    expect(viaApi.message).toMatch(/is suspended/);
    expect(await rowCounts()).toEqual(before);
  });

  it('refuses a job larger than the remaining budget with the amounts', async () => {
    const scheduler = newScheduler();
    const small = await activeAllocation(db, a, admin, { gpuHours: 10, today: TODAY });
    const before = await rowCounts();
    // The form is told before submitting, with what fits: 2 h 30 min on 4 GPUs fit the 10 GPU-h left.
    const warned = await asUser(a).job.estimate({ allocationId: small.allocationId, resourceClassId: 'h100', gpus: 4, nodes: 1, walltimeMinutes: 180 });
    expect(warned.shortfalls).toEqual([{ limit: 'budget', unit: 'gpu_seconds', needed: 12 * H, left: 10 * H, gpus: 4, maxWalltimeSeconds: 2.5 * H }]);
    expect((await asUser(a).job.estimate({ allocationId: small.allocationId, resourceClassId: 'h100', gpus: 4, nodes: 1, walltimeMinutes: 150 })).shortfalls).toEqual([]);
    const tooBig = await refusal(submit(scheduler, a, jobInput(small.allocationId, { gpus: 4, walltimeSeconds: 3 * H })));
    expect(tooBig).toMatchObject({ code: 'PRECONDITION_FAILED', key: 'ledger.insufficientGpu' });
    expect(tooBig.message).toMatch(/needs 12 GPU-h, 10 GPU-h remain/);
    expect(await rowCounts()).toEqual(before);
    const row = await expectLedgerConsistent(small.allocationId);
    expect(row).toMatchObject({ reserved: 0, charged: 0 });
  });

  // ---- 6. data residency ----------------------------------------------------------------------

  it('keeps jobs at the sites a tenant’s data-residency rule allows, and records every site', async () => {
    const scheduler = newScheduler();
    const signUp = async (name: string, kind: 'academic' | 'company', residency: 'DE' | 'EU') => {
      const email = `owner-${randomUUID().slice(0, 8)}@example.org`;
      await callerFor(db, { now: clock }).account.signUp({ name: `Owner of ${name}`, email, password: TEST_PASSWORD, organisation: { name, kind, country: 'DE', residency } });
      await confirmEmail(db, email);
      return accountOf(db, email);
    };

    // A German-only academic tenant with an h100 allocation.
    const de = await signUp(`Dresden Institute ${randomUUID().slice(0, 6)}`, 'academic', 'DE');
    const deAlloc = await activeAllocation(db, de, admin, { gpuHours: 100, today: TODAY });
    const deTargets = await jobTargets(db, await actorOf(de), TODAY);
    expect(deTargets.resourceClasses.map((c) => c.id)).toEqual(['h100']);
    expect(deTargets.allocations.map((x) => x.id)).toEqual([deAlloc.allocationId]);

    // An EU-only academic tenant with a b200 allocation: never offered the Swiss partition.
    const eu = await signUp(`Leuven Lab ${randomUUID().slice(0, 6)}`, 'academic', 'EU');
    const euAlloc = await activeAllocation(db, eu, admin, { gpuHours: 100, today: TODAY, resourceClassId: 'b200' });
    const euClasses = (await jobTargets(db, await actorOf(eu), TODAY)).resourceClasses.map((c) => c.id);
    expect(euClasses).not.toContain('h100-ch');
    expect(euClasses.sort()).toEqual(['b200', 'h100']);
    const euJob = await submit(scheduler, eu, jobInput(euAlloc.allocationId, { resourceClassId: 'b200', gpus: 8, walltimeSeconds: H }));
    expect(euJob).toMatchObject({ siteId: 'fi-kajaani', centsPerGpuHour: 300 });

    // A German-only company with a credit line (any class): b200 (Finland) and h100-ch (Switzerland) are refused.
    const deCompany = await signUp(`Munich Models GmbH ${randomUUID().slice(0, 6)}`, 'company', 'DE');
    await asUser(admin).staff.changeTenantStatus({ orgId: deCompany.orgId, action: 'verify', reason: 'Commercial register checked' });
    const project = await asUser(deCompany).project.create({ title: 'Sovereign language model', abstract: 'A German language model trained in Germany.', workloadKind: 'training', members: [] });
    const credit = await asUser(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 2000, periodStart: TODAY, periodEnd: '2027-06-01', reason: 'Signed contract 2026-11' });
    expect((await jobTargets(db, await actorOf(deCompany), TODAY)).resourceClasses.map((c) => c.id)).toEqual(['h100']);

    const before = await rowCounts();
    const finland = await refusal(submit(scheduler, deCompany, jobInput(credit.id, { resourceClassId: 'b200' })));
    expect(finland).toMatchObject({ code: 'BAD_REQUEST', field: 'resourceClassId', key: 'job.residency', params: { residency: 'DE', country: 'FI' } });
    expect(finland.message).toMatch(/\(DE\) does not allow jobs in FI/);
    const swiss = await refusal(submit(scheduler, deCompany, jobInput(credit.id, { resourceClassId: 'h100-ch', gpus: 4 })));
    expect(swiss).toMatchObject({ field: 'resourceClassId', key: 'job.residency', params: { country: 'CH' } });
    expect(await rowCounts()).toEqual(before);

    const germany = await submit(scheduler, deCompany, jobInput(credit.id, { resourceClassId: 'h100', gpus: 2 }));
    expect(germany).toMatchObject({ siteId: 'de-jena', reservedUnit: 'cents', centsPerGpuHour: 290 });

    // An EU company whose project needs its data in Germany: that project is offered and admitted only there.
    const euCompany = await signUp(`Lyon Vision SAS ${randomUUID().slice(0, 6)}`, 'company', 'EU');
    await asUser(admin).staff.changeTenantStatus({ orgId: euCompany.orgId, action: 'verify', reason: 'Commercial register checked' });
    const germanOnly = await asUser(euCompany).project.create({ title: 'Patient records model', abstract: 'Fine-tuning on records that must stay in Germany.', workloadKind: 'fine_tuning', dataResidency: 'DE', members: [] });
    const germanCredit = await asUser(admin).staff.grantCreditLine({ projectId: germanOnly.id, amountEuros: 2000, periodStart: TODAY, periodEnd: '2027-06-01', reason: 'Signed contract 2026-11' });
    const euTargets = await jobTargets(db, await actorOf(euCompany), TODAY);
    expect(euTargets.resourceClasses.map((c) => c.id).sort()).toEqual(['b200', 'h100']); // the tenant's rule
    expect(euTargets.allocations.find((a) => a.id === germanCredit.id)).toMatchObject({ projectResidency: 'DE' }); // the form narrows it
    const beforeProject = await rowCounts();
    const outsideProject = await refusal(submit(scheduler, euCompany, jobInput(germanCredit.id, { resourceClassId: 'b200' })));
    expect(outsideProject).toMatchObject({ code: 'BAD_REQUEST', field: 'resourceClassId', key: 'job.projectResidency', params: { residency: 'DE', country: 'FI' } });
    expect(outsideProject.message).toMatch(/This project's data-residency need \(DE\) does not allow jobs in FI/);
    expect(await rowCounts()).toEqual(beforeProject);
    const insideProject = await submit(scheduler, euCompany, jobInput(germanCredit.id, { resourceClassId: 'h100', gpus: 2 }));
    expect(insideProject).toMatchObject({ siteId: 'de-jena' });

    // Every job ever created ran (or would run) at its resource class's site.
    const all = await db.select({ id: jobs.id, siteId: jobs.siteId, classSite: resourceClasses.siteId }).from(jobs).innerJoin(resourceClasses, eq(resourceClasses.id, jobs.resourceClassId));
    expect(all.length).toBeGreaterThan(5);
    for (const j of all) expect(j.siteId, `site of job ${j.id}`).toBe(j.classSite);

    for (const [who, id] of [[eu, euJob.id], [deCompany, germany.id], [euCompany, insideProject.id]] as const) await cancelJob(db, scheduler, await actorOf(who), id, now);
    await reconcileOnce(db, scheduler, now);
    await expectLedgerConsistent(credit.id);
    await expectLedgerConsistent(germanCredit.id);
    await expectLedgerConsistent(euAlloc.allocationId);
  });

  // ---- 7. company credit line -----------------------------------------------------------------

  it('reserves and charges a company credit line in cents at 290 ct/GPU-h, within the monthly cap', async () => {
    const scheduler = newScheduler();
    const company = await createTenant(db, { kind: 'company', name: `Vision Robotics AG ${randomUUID().slice(0, 6)}` });
    await asUser(admin).staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Commercial register checked' });
    const project = await asUser(company).project.create({ title: 'Vision model', abstract: 'Fine-tuning a vision model.', workloadKind: 'fine_tuning', members: [] });
    const credit = await asUser(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 5000, periodStart: TODAY, periodEnd: '2027-06-01', reason: 'Signed contract 2026-11' });

    // 3 GPUs × 61 min × 290 ct/h = 884.5 ct, reserved rounded up — as the estimate says.
    const estimate = await asUser(company).job.estimate({ allocationId: credit.id, resourceClassId: 'h100', gpus: 3, nodes: 1, walltimeMinutes: 61 });
    expect(estimate).toMatchObject({ unit: 'cents', reservation: 885, maxCostCents: 885, centsPerGpuHour: 290, reservedGpuSeconds: 3 * 61 * 60 });
    const job = await submit(scheduler, company, jobInput(credit.id, { gpus: 3, walltimeSeconds: 61 * 60 }));
    expect(job).toMatchObject({ reservedUnit: 'cents', reservedAmount: 885, centsPerGpuHour: 290, siteId: 'de-jena' });
    expect(await allocationRow(credit.id)).toMatchObject({ reserved: 885, charged: 0 });

    const runtime = job.simulation!.runtimeSeconds;
    const done = await settle(scheduler, job.id);
    const gpuSeconds = 3 * runtime;
    const cents = Math.floor((gpuSeconds * 290 + H / 2) / H); // half up
    expect(done).toMatchObject({ state: 'COMPLETED', gpuSeconds, costCents: cents, chargedAmount: cents });
    expect(cents).toBe(Math.round((gpuSeconds * 290) / H));
    const row = await expectLedgerConsistent(credit.id);
    expect(row).toMatchObject({ charged: cents, reserved: 0, granted: 500_000 });
    expect((await ledgerRowsOf(job.id)).map((r) => [r.kind, r.amount])).toEqual([
      ['reserve', 885],
      ['release', 885],
      ['charge', cents],
    ]);

    // The owner caps the month: the spent cents plus €5 (and a little).
    const capEuros = Math.ceil(cents / 100) + 5;
    await asUser(company).allocation.setMonthlyCap({ capEuros, reason: 'Budget control' });
    const fits = await submit(scheduler, company, jobInput(credit.id, { gpus: 1, walltimeSeconds: H }));
    expect(fits.reservedAmount).toBe(290);
    const before = await rowCounts();
    const remaining = capEuros * 100 - cents - 290;
    // The estimate says so before submitting: the cap, not the credit line, is what is short.
    const warned = await asUser(company).job.estimate({ allocationId: credit.id, resourceClassId: 'h100', gpus: 2, nodes: 1, walltimeMinutes: 60 });
    expect(warned.room.monthCapLeftCents).toBe(remaining);
    expect(warned.shortfalls).toEqual([{ limit: 'monthlyCap', unit: 'cents', needed: 580, left: remaining, gpus: 2, maxWalltimeSeconds: Math.floor((remaining * 3600) / (2 * 290) / 60) * 60 }]);
    const over = await refusal(submit(scheduler, company, jobInput(credit.id, { gpus: 2, walltimeSeconds: H })));
    expect(over).toMatchObject({ code: 'PRECONDITION_FAILED', key: 'ledger.monthlyCap', params: { needed: 5.8, remaining: remaining / 100, cap: capEuros } });
    expect(over.message).toBe(translate('en', 'ledger.monthlyCap', { cap: capEuros, needed: 5.8, remaining: remaining / 100 }));
    expect(over.message).toMatch(new RegExp(`cap of €${capEuros}: it needs €5.8, €[\\d.]+ remain this month`));
    expect(await rowCounts()).toEqual(before);

    await cancelJob(db, scheduler, await actorOf(company), fits.id, now);
    await reconcileOnce(db, scheduler, now);
    await expectLedgerConsistent(credit.id);
  });

  // ---- 8. tenancy -----------------------------------------------------------------------------

  it('shows jobs only to their tenant, and within it to the project’s members', async () => {
    const scheduler = newScheduler();
    const aJob = await submit(scheduler, a, jobInput(main.allocationId, { gpus: 1, walltimeSeconds: H, env: { HF_TOKEN: 'hf_secret', SEED: '7' } }));
    const bJob = await submit(scheduler, b, jobInput(bAlloc.allocationId, { gpus: 1, walltimeSeconds: H }));
    const aJobIds = new Set((await db.select({ id: jobs.id }).from(jobs).where(eq(jobs.orgId, a.orgId))).map((r) => r.id));
    const all = { status: 'all' as const, limit: 500 };

    for (const who of [b, bMember]) {
      const actor = await actorOf(who);
      expect(await refusal(getJob(db, actor, aJob.id))).toMatchObject({ code: 'NOT_FOUND' });
      expect(await refusal(cancelJob(db, scheduler, actor, aJob.id, now))).toMatchObject({ code: 'NOT_FOUND' });
      const listed = await listJobs(db, actor, all);
      expect(listed.filter((j) => aJobIds.has(j.id))).toEqual([]);
    }
    expect((await listJobs(db, await actorOf(b), all)).map((j) => j.id)).toContain(bJob.id);
    // The same through the API (these procedures do not touch the scheduler).
    expect((await routerRefusal(asUser(bMember).job.get({ jobId: aJob.id }))).code).toBe('NOT_FOUND');
    expect((await asUser(b).job.list()).map((j) => j.id)).not.toContain(aJob.id);
    expect((await asUser(aProjectMember).job.list({ status: 'active', limit: 100 })).map((j) => j.id)).toContain(aJob.id);
    const asColleague = await asUser(aProjectMember).job.get({ jobId: aJob.id });
    expect(asColleague.id).toBe(aJob.id);
    // A colleague sees the environment's names, not its values (tokens); the submitter (the PI here) sees both.
    expect(asColleague.env).toEqual([
      { name: 'HF_TOKEN', value: null },
      { name: 'SEED', value: null },
    ]);
    expect((await asUser(a).job.get({ jobId: aJob.id })).env).toEqual([
      { name: 'HF_TOKEN', value: 'hf_secret' },
      { name: 'SEED', value: '7' },
    ]);
    // Nothing of the portal's own bookkeeping leaves the server.
    for (const hidden of ['simulation', 'idempotencyKey', 'handoverUntil']) expect(asColleague).not.toHaveProperty(hidden);
    expect((await routerRefusal(asUser(aOutsider).job.get({ jobId: aJob.id }))).code).toBe('NOT_FOUND');
    expect((await jobRow(aJob.id)).cancelRequestedAt).toBeNull();

    // A plain member of the project sees its jobs, but may not cancel someone else's.
    const member = await actorOf(aProjectMember);
    const seen = await listJobs(db, member, all);
    expect(seen.map((j) => j.id)).toContain(aJob.id);
    expect(seen.every((j) => j.projectId === main.projectId)).toBe(true);
    expect(await getJob(db, member, aJob.id)).toMatchObject({ id: aJob.id, projectTitle: expect.any(String) as string, canCancel: false });
    expect(await refusal(cancelJob(db, scheduler, member, aJob.id, now))).toMatchObject({ code: 'FORBIDDEN', key: 'job.cancelNotAllowed' });

    // A member of the tenant outside the project sees none of them.
    const outsider = await actorOf(aOutsider);
    expect(await listJobs(db, outsider, all)).toEqual([]);
    expect(await refusal(getJob(db, outsider, aJob.id))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await refusal(cancelJob(db, scheduler, outsider, aJob.id, now))).toMatchObject({ code: 'NOT_FOUND' });

    // The owner sees all of the tenant's jobs.
    expect(new Set((await listJobs(db, await actorOf(a), all)).map((j) => j.id))).toEqual(aJobIds);

    await cancelJob(db, scheduler, await actorOf(a), aJob.id, now);
    await cancelJob(db, scheduler, await actorOf(b), bJob.id, now);
    await reconcileOnce(db, scheduler, now);
  });

  // ---- 9. expiry ------------------------------------------------------------------------------

  it('at the end of a period cancels queued jobs without charge and lets running ones finish and pay', async () => {
    // Real time (speed 1), so a day can pass while a job is still running.
    const scheduler = newScheduler(1);
    const ending = await activeAllocation(db, a, admin, { gpuHours: 100, today: TODAY, periodEnd: '2026-12-02' });
    const big = await submit(scheduler, a, jobInput(filler.allocationId, { gpus: 120, nodes: 15, walltimeSeconds: 40 * H }));
    const running = await submit(scheduler, a, jobInput(ending.allocationId, { gpus: 2, walltimeSeconds: 40 * H }));
    const queued = await submit(scheduler, a, jobInput(ending.allocationId, { gpus: 8, walltimeSeconds: H }));
    await reconcileOnce(db, scheduler, now);
    expect((await jobRow(big.id)).state).toBe('RUNNING');
    expect((await jobRow(running.id)).state).toBe('RUNNING');
    expect((await jobRow(queued.id)).state).toBe('PENDING');
    // Training runs use at least half their walltime: the running job is still running tomorrow.
    expect(running.simulation!.runtimeSeconds).toBeGreaterThan(15 * H);

    now = new Date('2026-12-02T00:00:30Z');
    await reconcileOnce(db, scheduler, now);
    expect((await jobRow(running.id)).state).toBe('RUNNING');
    expect(await expireDueAllocations(db, '2026-12-02')).toEqual([ending.allocationId]);

    const expiredRow = await expectLedgerConsistent(ending.allocationId);
    expect(expiredRow).toMatchObject({ status: 'expired', reserved: 2 * 40 * H, charged: 0, expired: 100 * H - 2 * 40 * H });
    const marked = await jobRow(queued.id);
    expect(marked.cancelRequestedAt).not.toBeNull();
    expect(marked.pendingReason).toBe('AllocationExpired');
    expect((await ledgerRowsOf(queued.id)).map((r) => r.kind)).toEqual(['reserve', 'release']);
    expect((await ledgerRowsOf(queued.id))[1]!.reason).toMatch(/period ended on 2026-12-02/);
    expect((await jobRow(running.id)).cancelRequestedAt).toBeNull();

    // The next round stops the queued job at the scheduler; it ends cancelled and unpaid.
    await reconcileOnce(db, scheduler, now);
    const cancelled = await jobRow(queued.id);
    expect(cancelled).toMatchObject({ state: 'CANCELLED', gpuSeconds: 0, chargedAmount: 0, costCents: 0, startedAt: null, exitCode: null, exitSignal: null });
    expect(cancelled.settledAt).not.toBeNull();
    expect((await eventsOf(queued.id)).map((e) => e.message)).toContain('job.event.allocationExpired');
    expect((await ledgerRowsOf(queued.id)).map((r) => r.kind)).toEqual(['reserve', 'release']);
    const [atScheduler] = await scheduler.jobs([queued.id]);
    expect(atScheduler?.state).toBe('CANCELLED');
    expect((await jobRow(running.id)).state).toBe('RUNNING');

    // The running job ends on its own and is charged in full; the unused part of its reservation is written off.
    const done = await settle(scheduler, running.id, 6 * H, 1);
    const runtime = running.simulation!.runtimeSeconds;
    expect(done).toMatchObject({ state: 'COMPLETED', gpuSeconds: 2 * runtime, chargedAmount: 2 * runtime });
    const final = await expectLedgerConsistent(ending.allocationId);
    expect(final).toMatchObject({ status: 'expired', reserved: 0, charged: 2 * runtime, expired: 100 * H - 2 * runtime });
    expect((await ledgerRowsOf(running.id)).map((r) => r.kind).sort()).toEqual(['charge', 'release', 'reserve']);
    await settle(scheduler, big.id, 6 * H, 1);
    await expectLedgerConsistent(filler.allocationId);
  });

  it('charges a job that was queued at the end of the period but started before its cancellation reached the scheduler', async () => {
    const scheduler = newScheduler(1);
    now = new Date('2026-12-05T20:00:00Z');
    const ending = await activeAllocation(db, a, admin, { gpuHours: 100, today: '2026-12-05', periodEnd: '2026-12-06' });
    const big = await submit(scheduler, a, jobInput(filler.allocationId, { gpus: 128, nodes: 16, walltimeSeconds: 10 * H }));
    const queued = await submit(scheduler, a, jobInput(ending.allocationId, { gpus: 8, walltimeSeconds: H }));
    await reconcileOnce(db, scheduler, now);
    expect((await jobRow(queued.id)).state).toBe('PENDING');

    now = new Date('2026-12-06T00:00:30Z');
    await reconcileOnce(db, scheduler, now);
    expect(await expireDueAllocations(db, '2026-12-06')).toEqual([ending.allocationId]);
    expect((await jobRow(queued.id)).cancelRequestedAt).not.toBeNull();
    // The partition frees up before the reconciler's next round: the scheduler starts the queued job.
    await cancelJob(db, scheduler, await actorOf(a), big.id, now);
    expect((await scheduler.jobs([queued.id]))[0]?.state).toBe('RUNNING');

    advance(600, 1);
    await reconcileOnce(db, scheduler, now);
    const ended = await jobRow(queued.id);
    expect(ended).toMatchObject({ state: 'CANCELLED', gpuSeconds: 8 * 600 });
    // What the job record says was charged must be what the ledger charged.
    const charges = (await ledgerRowsOf(queued.id)).filter((r) => r.kind === 'charge').reduce((s, r) => s + r.amount, 0);
    expect.soft(ended.chargedAmount, 'the job record charges its usage').toBe(8 * 600);
    expect(charges, 'ledger charge of a job that ran 600 s on 8 GPUs').toBe(ended.chargedAmount);
    const row = await expectLedgerConsistent(ending.allocationId);
    expect(row.charged).toBe(8 * 600);
  });
});
