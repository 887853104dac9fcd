// What-if planning over the demo centre's last 90 days, as staff use it: a run is queued through the
// procedure, the worker's function replays it (progress noted on the way) and stores both outcomes.
// One more H100 node group gives lower waits than the current machine; a tight power cap at Jena
// delays jobs the current machine never delays. The current machine's replay reproduces the waits
// the history really had. Bad proposals are refused naming the field; a run whose worker died is
// taken again.
import type { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { auditEvents, whatIfRuns } from '~/db/schema';
import { appRouter } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import { callerFor, createStaff, dbTargets, openTestDb } from '~/server/testing/harness';
import { seedDemoCentre } from '~/server/services/demo/demo-seed';
import { seedDemoHistory } from '~/server/services/demo/demo-history';
import { runDueWhatIf } from './what-if';

const NOW = new Date('2026-12-01T09:30:00Z');
/** The last 90 whole days before today. */
const PERIOD = { from: '2026-09-02', to: '2026-11-30' };

describe.each(dbTargets())('what-if planning on the demo centre on %s', (target) => {
  let handle: DbHandle;
  let staffId: string;

  beforeAll(async () => {
    handle = await openTestDb(target);
    await seedDemoCentre(handle.db, NOW);
    await seedDemoHistory(handle.db, NOW);
    staffId = (await createStaff(handle.db, 'reviewer')).userId;
  }, 600_000);
  afterAll(async () => handle?.close());

  const asStaff = () => callerFor(handle.db, { userId: staffId, now: () => NOW });

  /** Queues a run, lets the worker's function replay it while polling its progress, and returns it with the progress seen. */
  const replay = async (title: string, changes: Parameters<ReturnType<typeof asStaff>['whatIf']['create']>[0]['changes']) => {
    const { id } = await asStaff().whatIf.create({ title, ...PERIOD, changes });
    expect((await asStaff().whatIf.get({ id })).status).toBe('queued');
    const seen = new Set<number>();
    let finished = false;
    const worker = runDueWhatIf(handle.db, () => NOW, { sliceMs: 2, noteMs: 0 }).finally(() => (finished = true));
    while (!finished) {
      const [row] = await handle.db.select({ p: whatIfRuns.progressPermille, s: whatIfRuns.status }).from(whatIfRuns).where(eq(whatIfRuns.id, id));
      if (row!.s === 'running') seen.add(row!.p);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await worker).toBe(id);
    return { run: await asStaff().whatIf.get({ id }), seen: [...seen] };
  };

  it('one more H100 node group: lower waits than the current machine, which waits as the history did', async () => {
    const { run, seen } = await replay('8 more H100 nodes in Jena', [{ kind: 'nodes', classId: 'h100', delta: 8 }]);
    expect(run).toMatchObject({ status: 'done', progressPermille: 1000, error: null });
    expect(seen.some((p) => p > 0 && p < 1000)).toBe(true);
    const { history, current, proposed } = run.result!;
    expect(history.replayed).toBeGreaterThan(400);
    expect(history.replayed + history.neverStarted + history.unknownRuntime).toBe(history.submitted);
    // The current machine replayed with the live cluster's policy: the waits the history really had.
    expect(current.waitP90Seconds).toBe(history.recordedWaitP90Seconds);
    expect(current.waitP50Seconds).toBe(history.recordedWaitP50Seconds);
    expect(current.waitMeanSeconds).toBeGreaterThan(0);
    // 64 more GPUs: waits fall, no job waits longer at p90, the machine is less utilised and draws more.
    expect(proposed.gpus).toBe(current.gpus + 64);
    expect(proposed.waitMeanSeconds).toBeLessThan(current.waitMeanSeconds);
    expect(proposed.waitP90Seconds).toBeLessThanOrEqual(current.waitP90Seconds);
    expect(proposed.boundedSlowdownMilli).toBeLessThan(current.boundedSlowdownMilli);
    expect(proposed.utilisationBp).toBeLessThan(current.utilisationBp);
    expect(proposed.itEnergyWh).toBeGreaterThan(current.itEnergyWh);
    const h100 = (o: typeof current) => o.classes.find((c) => c.id === 'h100')!;
    expect(h100(proposed).gpus).toBe(192);
    // Facility = IT × Jena's PUE and heat reused as settlement books them, summed over the sites.
    expect(current.facilityEnergyWh).toBeGreaterThan(current.itEnergyWh);
    expect(current.heatReusedWh).toBeGreaterThan(0);
    expect(current.co2eGrams).toBeGreaterThan(0);
    expect(current.revenueCents).toBeGreaterThan(0);
    // The demo's Lugano cap (24 kW) holds some of the Swiss institute's jobs back; Jena's new nodes change nothing there.
    expect(current.jobsDelayedByPowerCap).toBeGreaterThan(0);
    expect(proposed.jobsDelayedByPowerCap).toBe(current.jobsDelayedByPowerCap);
    // Queued by staff, audited; listed with its change.
    const listed = (await asStaff().whatIf.list()).find((r) => r.id === run.id)!;
    expect(listed.changes).toEqual([{ kind: 'nodes', classId: 'h100', delta: 8 }]);
    const audit = await handle.db.select().from(auditEvents).where(eq(auditEvents.targetId, run.id));
    expect(audit.map((a) => a.action)).toEqual(['whatif.create']);
  });

  it('a tight power cap at Jena: more jobs delayed, longer waits, the cap never exceeded', async () => {
    const { run } = await replay('Jena capped at 80 kW', [{ kind: 'powerCap', siteId: 'de-jena', capKw: 80 }]);
    const { current, proposed } = run.result!;
    expect(proposed.jobsDelayedByPowerCap).toBeGreaterThan(current.jobsDelayedByPowerCap);
    expect(proposed.waitMeanSeconds).toBeGreaterThan(current.waitMeanSeconds);
    const jena = proposed.sites.find((s) => s.id === 'de-jena')!;
    expect(jena.powerCapW).toBe(80_000);
    expect(jena.peakFacilityPowerW).toBeLessThanOrEqual(80_000);
    expect(Math.max(...jena.hourlyPeakW)).toBeLessThanOrEqual(80_000);
    // Without the cap Jena drew more than that at its peak.
    expect(current.sites.find((s) => s.id === 'de-jena')!.peakFacilityPowerW).toBeGreaterThan(80_000);
    expect(jena.hourlyPeakW).toHaveLength(90 * 24);
  });

  it('refuses a proposal or a period that cannot apply, naming the field', async () => {
    // createCaller throws the raw error: shape it as the HTTP handler does, in English and German.
    const refusal = (input: Parameters<ReturnType<typeof asStaff>['whatIf']['create']>[0], locale: 'en' | 'de' = 'en') =>
      asStaff()
        .whatIf.create(input)
        .then(
          () => null,
          (error: TRPCError) => {
            const shape = getErrorShape({ config: appRouter._def._config, error, type: 'mutation', path: 'whatIf.create', input, ctx: createContextInner({ db: handle.db, locale }) }) as { data: { fieldErrors?: Record<string, string> } };
            return { fields: shape.data.fieldErrors };
          },
        );
    expect(await refusal({ title: 'x', ...PERIOD, changes: [{ kind: 'nodes', classId: 'h100', delta: -16 }] })).toMatchObject({ fields: { 'changes.0.delta': expect.any(String) as unknown } });
    expect(await refusal({ title: 'x', ...PERIOD, changes: [{ kind: 'nodes', classId: 'nope', delta: 1 }] })).toMatchObject({ fields: { 'changes.0.classId': expect.any(String) as unknown } });
    expect(await refusal({ title: 'x', from: '2026-11-30', to: '2026-11-01', changes: [{ kind: 'policy', policy: 'fifo' }] })).toMatchObject({ fields: { from: expect.any(String) as unknown } });
    expect(await refusal({ title: 'x', from: '2026-11-01', to: '2026-12-05', changes: [{ kind: 'policy', policy: 'fifo' }] })).toMatchObject({ fields: { to: expect.any(String) as unknown } });
    expect(await refusal({ title: 'x', ...PERIOD, changes: [] })).not.toBeNull();
    expect(await refusal({ title: 'x', ...PERIOD, changes: [{ kind: 'nodes', classId: 'h100', delta: -16 }] })).toEqual({ fields: { 'changes.0.delta': 'The class has 16 nodes: remove at most 15.' } });
    expect(await refusal({ title: 'x', ...PERIOD, changes: [{ kind: 'nodes', classId: 'h100', delta: -16 }] }, 'de')).toEqual({ fields: { 'changes.0.delta': 'Die Klasse hat 16 Knoten: Entfernen Sie höchstens 15.' } });
    // Nothing was queued by the refusals.
    expect((await asStaff().whatIf.list()).filter((r) => r.title === 'x')).toEqual([]);
  });

  it('staff queueing at once and workers running at once: each run replayed by exactly one worker', async () => {
    // Four staff requests at once through the procedure, then three workers (separate calls, on Postgres separate connections) at once.
    const created = await Promise.all(['A', 'B', 'C', 'D'].map((n) => asStaff().whatIf.create({ title: `Parallel ${n}`, ...PERIOD, changes: [{ kind: 'nodes', classId: 'b200', delta: 2 }] })));
    const worker = async () => {
      const ran: string[] = [];
      for (let id = await runDueWhatIf(handle.db, () => NOW); id; id = await runDueWhatIf(handle.db, () => NOW)) ran.push(id);
      return ran;
    };
    const ran = (await Promise.all([worker(), worker(), worker()])).flat();
    expect(ran.sort()).toEqual(created.map((c) => c.id).sort());
    for (const { id } of created) {
      const [row] = await handle.db.select({ status: whatIfRuns.status, attempts: whatIfRuns.attempts }).from(whatIfRuns).where(eq(whatIfRuns.id, id));
      expect(row).toEqual({ status: 'done', attempts: 1 });
    }
  });

  it('takes again a run whose worker stopped renewing its lease', async () => {
    const { id } = await asStaff().whatIf.create({ title: 'FIFO instead', ...PERIOD, changes: [{ kind: 'policy', policy: 'fifo' }] });
    await handle.db.update(whatIfRuns).set({ status: 'running', attempts: 1, leaseUntil: new Date(NOW.getTime() - 1000), progressPermille: 400 }).where(eq(whatIfRuns.id, id));
    expect(await runDueWhatIf(handle.db, () => NOW)).toBe(id);
    const run = await asStaff().whatIf.get({ id });
    expect(run).toMatchObject({ status: 'done', progressPermille: 1000 });
    expect(run.result!.proposed.jobsRun).toBe(run.result!.current.jobsRun);
    expect(await runDueWhatIf(handle.db, () => NOW)).toBeNull();
  });
});
