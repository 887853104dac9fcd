// The whole path on a real Slurm: a researcher's job submitted through the API, handed to slurmrestd,
// followed by the reconciler and settled once from slurmdbd's record, so the ledger charges exactly what
// `sacct` reports (elapsed × GPUs); a job with a begin time waits for it. A hand-over whose answer was lost is retried into the same Slurm job,
// also once slurmctld has forgotten it (MinJobAge), from slurmdbd's records.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobs, ledgerEntries } from '~/db/schema';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { SchedulerUnavailableError, type SchedulerPort } from '~/server/core/scheduler/port';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSlurmClient } from './client';
import { tokenSource } from './jwt';
import { createSlurmScheduler } from './index';
import { sacct, settleJob, sleep, testClusterSettings, waitUntil } from './testing';

/** A fetch that, when asked, lets the next submit reach slurmrestd and then drops its answer. */
function droppingFetch() {
  let dropNext = false;
  const wrapped: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const response = await fetch(input, init);
    if (dropNext && url.includes('/job/submit')) {
      dropNext = false;
      throw new TypeError('fetch failed: the answer was lost (test)');
    }
    return response;
  };
  return { fetch: wrapped, dropNextSubmitAnswer: () => (dropNext = true) };
}

describe('a job on a real Slurm, from the API to the ledger', () => {
  let handle: DbHandle;
  let db: Db;
  const target = dbTargets().at(-1)!; // real Postgres when the run has one
  const now = () => new Date();
  const today = now().toISOString().slice(0, 10);
  let port: SchedulerPort;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let allocationId: string;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db, { name: `Slurm Journey ${randomUUID().slice(0, 6)}` });
    // The grant makes the project's Slurm account with its GPU-minute limit (scheduler passed on).
    ({ allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today, scheduler: port }));
  });
  afterAll(async () => handle?.close());

  const input = (command: string, gpus = 2) => ({ allocationId, resourceClassId: 'h100', name: 'slurm journey', kind: 'training' as const, gpus, nodes: 1, walltimeMinutes: 5, image: 'img', command, env: { STEP: 'one' }, idempotencyKey: randomUUID() });

  const settle = (jobId: string, scheduler: SchedulerPort, maxSeconds = 180) => settleJob(db, scheduler, jobId, maxSeconds);

  async function charges(jobId: string) {
    return db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, jobId), eq(ledgerEntries.kind, 'charge')));
  }

  it('runs to the end and is charged once, exactly sacct’s elapsed × GPUs', async () => {
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit(input('sleep 12'));
    expect(job.state).toBe('PENDING');
    const row = await settle(job.id, port);
    expect(row.state).toBe('COMPLETED');
    expect(row.exitCode).toBe(0);
    const [record, ...more] = sacct(job.id);
    expect(more).toHaveLength(0);
    expect(record).toMatchObject({ state: 'COMPLETED', gpus: 2, account: row.projectId });
    expect(record!.elapsedSeconds).toBeGreaterThanOrEqual(12);
    expect(row.gpuSeconds).toBe(record!.elapsedSeconds * record!.gpus);
    const charged = await charges(job.id);
    expect(charged).toHaveLength(1);
    expect(charged[0]!.amount).toBe(record!.elapsedSeconds * record!.gpus);
    // Further rounds change nothing.
    await reconcileOnce(db, port, now());
    expect(await charges(job.id)).toHaveLength(1);
    // The job page shows the figure the ledger charged.
    expect((await asOwner.job.get({ jobId: job.id })).gpuSeconds).toBe(record!.elapsedSeconds * 2);
  });

  it('a begin 2 minutes ahead: Slurm takes it, holds the job for its begin time and starts it no earlier', async () => {
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const begin = new Date(Date.now() + 120_000);
    const job = await asOwner.job.submit({ ...input('sleep 2', 1), begin: begin.toISOString() });
    // Handed over (slurmrestd 22.05 refused the epoch seconds sent before, and the job ended FAILED).
    expect(job.state).toBe('PENDING');
    // slurmctld names the reason on its next scheduling pass (at once when idle, later under load).
    let waiting = (await port.jobs([job.id]))[0];
    await waitUntil(async () => (waiting = (await port.jobs([job.id]))[0])?.pendingReason === 'BeginTime', 30);
    expect(waiting).toMatchObject({ state: 'PENDING', pendingReason: 'BeginTime', startedAt: null });
    const row = await settle(job.id, port, 300);
    expect(row.state).toBe('COMPLETED');
    // Slurm counts whole seconds: the start is at or after the asked second.
    expect(row.startedAt!.getTime()).toBeGreaterThanOrEqual(Math.floor(begin.getTime() / 1000) * 1000);
    const [record] = sacct(job.id);
    expect(record).toMatchObject({ state: 'COMPLETED' });
  });

  it('the low-carbon journey: the suggested start goes to Slurm as the begin, and Slurm holds the job until then', async () => {
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = input('sleep 2', 1);
    // Which hour is cleanest depends on when this runs: the first window whose cleanest start is not now.
    let suggestion = await asOwner.job.lowCarbonStart({ ...job, windowHours: 12 });
    if (suggestion.startsNow) suggestion = await asOwner.job.lowCarbonStart({ ...job, windowHours: 48 });
    if (suggestion.startsNow) {
      // Now is the cleanest hour of the next two days: there is no begin, and the job runs at once.
      const submitted = await asOwner.job.submit(job);
      expect((await settle(submitted.id, port)).state).toBe('COMPLETED');
      return;
    }
    expect(suggestion.begin.getTime()).toBeGreaterThan(Date.now());
    expect(suggestion.savedGrams).toBeGreaterThan(0);
    const submitted = await asOwner.job.submit({ ...job, begin: suggestion.begin.toISOString() });
    expect(submitted.state).toBe('PENDING');
    const [row] = await db.select().from(jobs).where(eq(jobs.id, submitted.id));
    expect(row!.beginAt).toEqual(suggestion.begin);
    // Slurm holds it for that begin: its expected start is the suggested second (the hand-over's own second or the next).
    expect(await waitUntil(async () => (await port.jobs([submitted.id]))[0]?.pendingReason === 'BeginTime', 30)).toBe(true);
    const startTime = execFileSync('squeue', ['-h', '-j', row!.schedulerJobId!, '-o', '%S'], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } }).trim();
    const slurmBegin = new Date(`${startTime}Z`).getTime();
    expect(slurmBegin - suggestion.begin.getTime()).toBeGreaterThanOrEqual(0);
    expect(slurmBegin - suggestion.begin.getTime()).toBeLessThanOrEqual(2000);
    // Not worth waiting hours here: cancelled while it waits, it costs nothing and frees its reservation.
    await asOwner.job.cancel({ jobId: submitted.id });
    const cancelled = await settle(submitted.id, port);
    expect(cancelled).toMatchObject({ state: 'CANCELLED', gpuSeconds: 0 });
    expect(await charges(submitted.id)).toEqual([]);
  });

  it('a hand-over whose answer was lost is retried into the same Slurm job — also after slurmctld forgot it', async () => {
    const dropping = droppingFetch();
    const losing = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db), { fetch: dropping.fetch });
    dropping.dropNextSubmitAnswer();
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: losing });
    const job = await asOwner.job.submit(input('sleep 3', 1));
    // The request did not hear back: the job waits in the portal, although Slurm has it.
    expect(job.state).toBe('SUBMITTING');
    // slurmdbd hears of a new job a moment after slurmctld.
    expect(await waitUntil(() => sacct(job.id).length > 0, 30), 'Slurm has the job whose answer was lost').toBe(true);
    expect(sacct(job.id)).toHaveLength(1);
    // Another process retries (a fresh adapter, no memory of the first submit): it finds the job by name.
    const other = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    expect((await reconcileOnce(db, other, now())).submitted).toBe(1);
    // Handed over (the same round may already have followed it further: it runs only seconds).
    const [queued] = await db.select().from(jobs).where(eq(jobs.id, job.id));
    expect(queued!.state).not.toBe('SUBMITTING');
    expect(queued!.schedulerJobId).toBe(String(sacct(job.id)[0]!.jobId));
    const row = await settle(job.id, other);
    expect(row.state).toBe('COMPLETED');
    expect(await charges(job.id)).toHaveLength(1);

    // MinJobAge later slurmctld has forgotten the job; a retry then must find it in slurmdbd.
    const settings = testClusterSettings();
    const client = createSlurmClient({ baseUrl: settings.restUrl, user: settings.user, token: tokenSource({ keyFile: settings.jwtKeyFile, user: settings.user }) });
    const forgotten = await waitUntil(async () => !(await client.listJobs()).some((j) => j.name === job.id), 420);
    expect(forgotten, 'slurmctld forgot the job within MinJobAge + its purge interval').toBe(true);
    const late = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    const again = await late.submit({ portalJobId: job.id, attempt: 3, name: 'retry', partition: 'h100', gpus: 1, nodes: 1, walltimeSeconds: 300, account: row.projectId, user: owner.userId, image: 'img', command: 'sleep 3', env: {} });
    expect(again.schedulerJobId).toBe(row.schedulerJobId);
    await sleep(3000); // a second job, had one been made, would be in slurmdbd by now
    expect(sacct(job.id)).toHaveLength(1);
    // And the job, asked for by id, is still the settled one, read from slurmdbd.
    const [status] = await late.jobs([job.id]);
    expect(status).toMatchObject({ state: 'COMPLETED', schedulerJobId: row.schedulerJobId, gpuSeconds: row.gpuSeconds });
  });

  it('a lookup Slurm cannot answer leaves the job waiting: no resubmit without proof', async () => {
    const broken = createSlurmScheduler({ ...testClusterSettings(), restUrl: 'http://127.0.0.1:9' }, await slurmClassesFromCatalogue(db));
    await expect(broken.submit({ portalJobId: randomUUID(), attempt: 2, name: 'x', partition: 'h100', gpus: 1, nodes: 1, walltimeSeconds: 60, account: 'contract-account', user: 'u', image: 'img', command: 'true', env: {} })).rejects.toThrow(SchedulerUnavailableError);
  });
});
