// The centre dashboard on hand-computed data: rollup rows, settled and running jobs and allocations
// inserted directly, then every figure checked exactly — utilisation per partition and day, wait
// percentiles, top tenants, totals, revenue by kind, the filters, the refusals, staff-only access,
// and both CSV exports (also through the download route) — on PGlite and, with TEST_DATABASE_URL, Postgres.
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, projects, usageRollups } from '~/db/schema';
import { appRouter } from '~/server/api/root';
import { centreRefusal } from '~/server/api/routers/centre';
import { createContextInner, type Context } from '~/server/api/trpc';
import { nearestRank } from '~/server/core/usage/percentiles';
import { bucketValue, waitBucket } from '~/server/core/usage/wait-buckets';
import { rebuildCentreRollups } from './usage';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { CSV_BOM } from '~/server/core/csv';
import { centreDashboard, centreDashboardCsv } from './centre';

// The download route resolves its caller from the request (session, cookies); here the test supplies the context.
const requestContext = vi.hoisted(() => ({ current: undefined as Context | undefined }));
vi.mock('~/server/api/context', () => ({
  createRequestContext: () => Promise.resolve(requestContext.current!),
  requestLocale: () => Promise.resolve(requestContext.current?.locale ?? 'en'),
}));
const { GET: downloadCsv } = await import('~/app/api/centre/csv/route');

const DAY = 86_400;
/** The demo catalogue's partitions: h100 16 × 8 = 128 GPUs, b200 8 × 8 = 64, h100-ch 8 × 4 = 32. */
type Partition = 'h100' | 'b200' | 'h100-ch';
const FROM = '2026-03-01';
const TO = '2026-03-03';

type Tenant = Awaited<ReturnType<typeof createTenant>> & { projectId: string; allocationId: string };

interface RollupRow {
  day: string;
  org: Tenant;
  rc: Partition;
  kind: 'training' | 'fine_tuning' | 'inference' | 'batch';
  jobs: number;
  gpuSeconds: number;
  costCents: number;
  energyWh: number;
  facilityEnergyWh: number;
  heatReusedWh: number;
  co2eGrams: number;
}

describe.each(dbTargets())('centre dashboard on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let staff: Awaited<ReturnType<typeof createStaff>>;
  /** Alpha University (academic), Beta, Compute GmbH (company, a comma in its name), Gamma AG (company). */
  let alpha: Tenant;
  let beta: Tenant;
  let gamma: Tenant;

  async function tenant(kind: 'academic' | 'company', name: string): Promise<Tenant> {
    const t = await createTenant(db, { kind, name });
    const [project] = await db.insert(projects).values({ orgId: t.orgId, title: `${name} project`, abstract: 'Test project.', fieldOfScience: 'Computer science', createdBy: t.userId }).returning({ id: projects.id });
    const [allocation] = await db
      .insert(allocations)
      .values({ projectId: project!.id, orgId: t.orgId, resourceClassId: 'h100', unit: 'gpu_seconds', periodStart: '2025-01-01', periodEnd: '2025-02-01', status: 'expired', granted: 0 })
      .returning({ id: allocations.id });
    return { ...t, projectId: project!.id, allocationId: allocation!.id };
  }

  async function rollup(r: RollupRow) {
    await db.insert(usageRollups).values({
      day: r.day,
      orgId: r.org.orgId,
      projectId: r.org.projectId,
      userId: r.org.userId,
      resourceClassId: r.rc,
      kind: r.kind,
      jobs: r.jobs,
      gpuSeconds: r.gpuSeconds,
      waitSeconds: 0,
      startedJobs: r.jobs,
      costCents: r.costCents,
      energyWh: r.energyWh,
      facilityEnergyWh: r.facilityEnergyWh,
      heatReusedWh: r.heatReusedWh,
      co2eGrams: r.co2eGrams,
    });
  }

  /** A job that started at `startedAt` after waiting `wait` seconds; settled unless `running`. */
  async function job(org: Tenant, rc: Partition, startedAt: string | null, wait: number, options: { running?: boolean } = {}) {
    const started = startedAt ? new Date(startedAt) : null;
    const submitted = new Date((started ?? new Date('2026-03-02T12:00:00Z')).getTime() - wait * 1000);
    const ended = started && !options.running ? new Date(started.getTime() + 3600_000) : null;
    await db.insert(jobs).values({
      orgId: org.orgId,
      projectId: org.projectId,
      allocationId: org.allocationId,
      userId: org.userId,
      idempotencyKey: randomUUID(),
      name: 'job',
      kind: 'training',
      resourceClassId: rc,
      siteId: rc === 'b200' ? 'fi-kajaani' : rc === 'h100' ? 'de-jena' : 'ch-lugano',
      gpus: 8,
      nodes: 1,
      walltimeSeconds: 7200,
      image: 'img',
      command: 'run',
      env: {},
      reservedAmount: 8 * 7200,
      reservedUnit: 'gpu_seconds',
      centsPerGpuHour: 180,
      state: !started ? 'PENDING' : options.running ? 'RUNNING' : 'COMPLETED',
      submittedAt: submitted,
      startedAt: started,
      endedAt: ended,
      // A running job's wait is not frozen yet: the dashboard derives it from start − submission.
      waitSeconds: started && !options.running ? wait : null,
      gpuSeconds: ended ? 8 * 3600 : null,
      settledAt: ended,
    });
  }

  async function allocation(org: Tenant, rc: Partition | null, periodStart: string, periodEnd: string, granted: number, charged = 0, unit: 'gpu_seconds' | 'cents' = 'gpu_seconds') {
    await db.insert(allocations).values({ projectId: org.projectId, orgId: org.orgId, resourceClassId: rc, unit, periodStart, periodEnd, granted, charged });
  }

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    staff = await createStaff(db, 'reviewer');
    alpha = await tenant('academic', 'Alpha University');
    beta = await tenant('company', 'Beta, Compute GmbH');
    gamma = await tenant('company', 'Gamma AG');

    const rows: RollupRow[] = [
      // In range. h100 on 1 March: 2,764,800 + 1,382,400 = 4,147,200 of 11,059,200 GPU-s = 37.5 %.
      { day: '2026-03-01', org: alpha, rc: 'h100', kind: 'training', jobs: 2, gpuSeconds: 2_764_800, costCents: 13_824, energyWh: 500_000, facilityEnergyWh: 540_000, heatReusedWh: 378_000, co2eGrams: 205_200 },
      { day: '2026-03-01', org: beta, rc: 'h100', kind: 'inference', jobs: 1, gpuSeconds: 1_382_400, costCents: 111_360, energyWh: 300_000, facilityEnergyWh: 324_000, heatReusedWh: 226_800, co2eGrams: 123_120 },
      // b200 on 2 March: the whole partition for the day (64 × 86,400 = 5,529,600) = 100 %.
      { day: '2026-03-02', org: beta, rc: 'b200', kind: 'training', jobs: 3, gpuSeconds: 5_529_600, costCents: 752_640, energyWh: 1_000_000, facilityEnergyWh: 1_040_000, heatReusedWh: 520_000, co2eGrams: 62_400 },
      // h100-ch on 3 March: 691,200 of 2,764,800 = 25 %; h100 on 3 March: 5,529,600 of 11,059,200 = 50 %.
      { day: '2026-03-03', org: gamma, rc: 'h100-ch', kind: 'batch', jobs: 1, gpuSeconds: 691_200, costCents: 49_920, energyWh: 1_200_000, facilityEnergyWh: 1_440_000, heatReusedWh: 0, co2eGrams: 57_600 },
      { day: '2026-03-03', org: alpha, rc: 'h100', kind: 'fine_tuning', jobs: 1, gpuSeconds: 5_529_600, costCents: 27_648, energyWh: 800_000, facilityEnergyWh: 864_000, heatReusedWh: 604_800, co2eGrams: 328_320 },
      // Outside the range on either side: must not count.
      { day: '2026-02-28', org: alpha, rc: 'h100', kind: 'training', jobs: 5, gpuSeconds: 9_999_999, costCents: 99_999, energyWh: 999_999, facilityEnergyWh: 999_999, heatReusedWh: 999_999, co2eGrams: 999_999 },
      { day: '2026-03-04', org: gamma, rc: 'b200', kind: 'training', jobs: 7, gpuSeconds: 8_888_888, costCents: 88_888, energyWh: 888_888, facilityEnergyWh: 888_888, heatReusedWh: 888_888, co2eGrams: 888_888 },
    ];
    for (const r of rows) await rollup(r);

    // Waits of jobs that started in the range: alpha on h100 5, 10, 20, 30 s; beta on b200 40–70 s;
    // gamma on h100-ch 80, 90, 100 s; beta's running job on h100 waited 120 s.
    await job(alpha, 'h100', '2026-03-03T23:59:59Z', 5); // last second of the range
    await job(alpha, 'h100', '2026-03-01T00:00:00Z', 10); // first second of the range
    await job(alpha, 'h100', '2026-03-01T08:00:00Z', 20);
    await job(alpha, 'h100', '2026-03-02T08:00:00Z', 30);
    for (const [i, wait] of [40, 50, 60, 70].entries()) await job(beta, 'b200', `2026-03-02T1${i}:00:00Z`, wait);
    for (const wait of [80, 90, 100]) await job(gamma, 'h100-ch', '2026-03-03T09:00:00Z', wait);
    await job(beta, 'h100', '2026-03-03T10:00:00Z', 120, { running: true });
    // Not counted: started before or after the range, or never started.
    await job(alpha, 'h100', '2026-02-28T23:59:59Z', 99_999);
    await job(gamma, 'h100', '2026-03-04T00:00:00Z', 99_999);
    await job(gamma, 'h100', null, 0);

    // GPU-hour allocations (period_end exclusive). The range [1 March, 3 March] is 3 days.
    await allocation(alpha, 'h100', '2026-02-01', '2026-03-03', 3_000_000, 1_000_000); // 30 days, 2 in range → 200,000
    await allocation(beta, 'h100', '2026-03-01', '2026-04-30', 60_000_000, 500_000); // 60 days, 3 in range → 3,000,000
    await allocation(beta, 'b200', '2026-03-03', '2026-03-13', 199_065_600); // 10 days, 1 in range → 19,906,560 = 1.2 × 3 days of b200
    await allocation(alpha, 'h100-ch', '2026-02-27', '2026-03-02', 1000); // 3 days, 1 in range → 333.33 → 333
    // Not counted: after the range, ended before it (end exclusive), a credit line in cents.
    await allocation(gamma, 'h100-ch', '2026-03-04', '2026-04-01', 7_777_777);
    await allocation(gamma, 'h100', '2026-02-01', '2026-03-01', 7_777_777);
    await allocation(gamma, null, '2026-01-01', '2026-12-31', 5_000_000, 0, 'cents');
    // The dashboard reads the centre's rollups: made from these rows and jobs as settlement would have.
    await rebuildCentreRollups(db);
  });

  afterAll(async () => {
    await handle?.close();
  });

  const asStaff = () => callerFor(db, { userId: staff.userId });

  it('computes utilisation per partition and day exactly', async () => {
    const d = await asStaff().centre.dashboard({ from: FROM, to: TO });
    expect(d.range).toEqual({ from: FROM, to: TO, days: 3 });
    expect(d.partitions.map((p) => p.id)).toEqual(['b200', 'h100', 'h100-ch']);
    const byId = Object.fromEntries(d.partitions.map((p) => [p.id, p]));
    expect(byId.h100!.capacityGpus).toBe(128);
    expect(byId.h100!.days).toEqual([
      { day: '2026-03-01', usedGpuSeconds: 4_147_200, capacityGpuSeconds: 128 * DAY, utilisation: 0.375 },
      { day: '2026-03-02', usedGpuSeconds: 0, capacityGpuSeconds: 128 * DAY, utilisation: 0 },
      { day: '2026-03-03', usedGpuSeconds: 5_529_600, capacityGpuSeconds: 128 * DAY, utilisation: 0.5 },
    ]);
    expect(byId.b200!.days.map((p) => p.utilisation)).toEqual([0, 1, 0]);
    expect(byId['h100-ch']!.days.map((p) => p.utilisation)).toEqual([0, 0, 0.25]);
    expect(byId.h100!.usedGpuSeconds).toBe(9_676_800);
    expect(byId.h100!.utilisation).toBe(9_676_800 / (3 * 128 * DAY));
    expect(byId.b200!.utilisation).toBe(1 / 3);
    expect(d.utilisation).toEqual({ usedGpuSeconds: 15_897_600, capacityGpuSeconds: 3 * 224 * DAY, utilisation: 15_897_600 / (3 * 224 * DAY) });
  });

  it('gives queue wait p50 and p90 by nearest rank over jobs that started in the range', async () => {
    const d = await asStaff().centre.dashboard({ from: FROM, to: TO });
    const waits = [5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 120];
    expect(d.wait).toEqual({ startedJobs: 12, p50Seconds: 50, p90Seconds: 100, meanSeconds: 56 });
    expect(d.wait.p50Seconds).toBe(nearestRank(waits, 0.5));
    expect(d.wait.p90Seconds).toBe(nearestRank(waits, 0.9));
  });

  it('ranks the top tenants by GPU-hours and by facility energy', async () => {
    const d = await asStaff().centre.dashboard({ from: FROM, to: TO });
    expect(d.topByGpuHours.map((t) => [t.name, t.gpuSeconds])).toEqual([
      ['Alpha University', 8_294_400],
      ['Beta, Compute GmbH', 6_912_000],
      ['Gamma AG', 691_200],
    ]);
    expect(d.topByFacilityEnergy.map((t) => [t.name, t.facilityEnergyWh])).toEqual([
      ['Gamma AG', 1_440_000],
      ['Alpha University', 1_404_000],
      ['Beta, Compute GmbH', 1_364_000],
    ]);
    expect(d.topByGpuHours[0]).toEqual({
      orgId: alpha.orgId,
      name: 'Alpha University',
      kind: 'academic',
      jobs: 3,
      gpuSeconds: 8_294_400,
      energyWh: 1_300_000,
      facilityEnergyWh: 1_404_000,
      heatReusedWh: 982_800,
      co2eGrams: 533_520,
      costCents: 41_472,
    });
  });

  it('sums the totals with energy per GPU-hour and splits cost into revenue and grant value', async () => {
    const d = await asStaff().centre.dashboard({ from: FROM, to: TO });
    expect(d.totals).toEqual({
      jobs: 8,
      gpuSeconds: 15_897_600, // 4,416 GPU-hours
      energyWh: 3_800_000, // 3,800 kWh
      facilityEnergyWh: 4_208_000,
      heatReusedWh: 1_729_600,
      co2eGrams: 776_640, // 776.64 kg
      costCents: 955_392,
      itKwhPerGpuHour: 3800 / 4416,
      facilityKwhPerGpuHour: 4208 / 4416,
      pue: 4_208_000 / 3_800_000, // 1.107: facility ÷ IT energy, all sites
    });
    // PUE per site from its partitions' rollups: Jena (h100) 1,728 ÷ 1,600 kWh, Kajaani (b200) 1,040 ÷ 1,000, Lugano (h100-ch) 1,440 ÷ 1,200.
    expect(d.sites).toEqual([
      { id: 'ch-lugano', name: 'Lugano, Switzerland (lake water cooled)', energyWh: 1_200_000, facilityEnergyWh: 1_440_000, pue: 1.2 },
      { id: 'de-jena', name: 'Jena, Germany (warm-water cooled)', energyWh: 1_600_000, facilityEnergyWh: 1_728_000, pue: 1.08 },
      { id: 'fi-kajaani', name: 'Kajaani, Finland (free cooling)', energyWh: 1_000_000, facilityEnergyWh: 1_040_000, pue: 1.04 },
    ]);
    expect(d.byKind).toEqual([
      { kind: 'company', meaning: 'revenue', costCents: 913_920, gpuSeconds: 7_603_200, jobs: 5 },
      { kind: 'academic', meaning: 'grantValue', costCents: 41_472, gpuSeconds: 8_294_400, jobs: 3 },
    ]);
  });

  it('compares allocations with capacity: granted, charged and over-subscription over the range', async () => {
    const d = await asStaff().centre.dashboard({ from: FROM, to: TO });
    expect(d.allocations.rows).toEqual([
      { partition: 'b200', name: 'B200 partition (Kajaani)', allocations: 1, grantedGpuSeconds: 199_065_600, chargedGpuSeconds: 0, grantedInRangeGpuSeconds: 19_906_560, capacityGpuSeconds: 3 * 64 * DAY, oversubscription: 19_906_560 / (3 * 64 * DAY) },
      { partition: 'h100', name: 'H100 partition (Jena)', allocations: 2, grantedGpuSeconds: 63_000_000, chargedGpuSeconds: 1_500_000, grantedInRangeGpuSeconds: 3_200_000, capacityGpuSeconds: 3 * 128 * DAY, oversubscription: 3_200_000 / (3 * 128 * DAY) },
      { partition: 'h100-ch', name: 'H100 partition (Lugano)', allocations: 1, grantedGpuSeconds: 1000, chargedGpuSeconds: 0, grantedInRangeGpuSeconds: 333, capacityGpuSeconds: 3 * 32 * DAY, oversubscription: 333 / (3 * 32 * DAY) },
    ]);
    expect(d.allocations.rows[0]!.oversubscription).toBeCloseTo(1.2, 12);
    expect(d.allocations.total).toEqual({
      allocations: 4,
      grantedGpuSeconds: 262_066_600,
      chargedGpuSeconds: 1_500_000,
      grantedInRangeGpuSeconds: 23_106_893,
      capacityGpuSeconds: 3 * 224 * DAY,
      oversubscription: 23_106_893 / (3 * 224 * DAY),
    });
  });

  it('filters by tenant kind', async () => {
    const d = await asStaff().centre.dashboard({ from: FROM, to: TO, tenantKind: 'company' });
    expect(d.filters).toEqual({ partition: null, tenantKind: 'company' });
    expect(d.partitions.find((p) => p.id === 'h100')!.days[0]!.utilisation).toBe(0.125);
    expect(d.topByGpuHours.map((t) => t.name)).toEqual(['Beta, Compute GmbH', 'Gamma AG']);
    expect(d.totals.jobs).toBe(5);
    expect(d.totals.gpuSeconds).toBe(7_603_200);
    expect(d.byKind).toEqual([{ kind: 'company', meaning: 'revenue', costCents: 913_920, gpuSeconds: 7_603_200, jobs: 5 }]);
    // Waits of beta and gamma: 40, 50, 60, 70, 80, 90, 100, 120.
    expect(d.wait).toMatchObject({ startedJobs: 8, p50Seconds: 70, p90Seconds: 120 });
    expect(d.allocations.rows.map((r) => [r.partition, r.allocations, r.grantedInRangeGpuSeconds])).toEqual([
      ['b200', 1, 19_906_560],
      ['h100', 1, 3_000_000],
    ]);
    const academic = await asStaff().centre.dashboard({ from: FROM, to: TO, tenantKind: 'academic' });
    expect(academic.byKind).toEqual([{ kind: 'academic', meaning: 'grantValue', costCents: 41_472, gpuSeconds: 8_294_400, jobs: 3 }]);
  });

  it('filters by partition', async () => {
    const d = await asStaff().centre.dashboard({ from: FROM, to: TO, partition: 'h100' });
    expect(d.partitions.map((p) => p.id)).toEqual(['h100']);
    expect(d.utilisation).toEqual({ usedGpuSeconds: 9_676_800, capacityGpuSeconds: 3 * 128 * DAY, utilisation: 9_676_800 / (3 * 128 * DAY) });
    expect(d.topByGpuHours.map((t) => [t.name, t.gpuSeconds])).toEqual([
      ['Alpha University', 8_294_400],
      ['Beta, Compute GmbH', 1_382_400],
    ]);
    expect(d.totals).toMatchObject({ jobs: 4, gpuSeconds: 9_676_800, energyWh: 1_600_000, co2eGrams: 656_640 });
    // Waits on h100: 5, 10, 20, 30 and the running job's 120.
    expect(d.wait).toMatchObject({ startedJobs: 5, p50Seconds: 20, p90Seconds: 120 });
    expect(d.allocations.rows.map((r) => r.partition)).toEqual(['h100']);
  });

  it('reads long waits from their buckets, within 1.6 %, and their mean exactly', async () => {
    // A day of its own (May), so the figures above stay as they are: four settled jobs and a running one.
    const settledWaits = [3_600, 7_250, 86_400, 200_000];
    for (const wait of settledWaits) await job(gamma, 'h100-ch', '2026-05-04T06:00:00Z', wait);
    await job(beta, 'h100-ch', '2026-05-04T07:00:00Z', 40_000, { running: true });
    await rebuildCentreRollups(db);
    const d = await centreDashboard(db, { from: '2026-05-04', to: '2026-05-04' });
    const waits = [...settledWaits, 40_000].sort((a, b) => a - b);
    expect(d.wait.startedJobs).toBe(5);
    expect(d.wait.meanSeconds).toBe(Math.round(waits.reduce((a, b) => a + b, 0) / 5));
    for (const [p, figure] of [[0.5, d.wait.p50Seconds], [0.9, d.wait.p90Seconds]] as const) {
      const exact = nearestRank(waits, p)!;
      expect(figure).toBe(bucketValue(waitBucket(exact)));
      expect(Math.abs(figure! - exact) / exact).toBeLessThanOrEqual(1 / 64);
    }
  });

  it('buckets waits in SQL as in TypeScript (portal_wait_bucket and waitBucket)', async () => {
    const waits = [-3, 0, 1, 127, 128, 129, 131, 132, 255, 256, 257, 1_000, 4_095, 4_096, 86_400, 1_000_000, 2 ** 30, 2 ** 31 - 1, 2 ** 31, 2 ** 40];
    const rows: unknown = await db.execute(sql`select w, portal_wait_bucket(w) as bucket from unnest(${`{${waits.join(',')}}`}::bigint[]) as t(w)`);
    // PGlite answers { rows }, postgres.js the rows themselves.
    const list = (rows && typeof rows === 'object' && 'rows' in rows ? rows.rows : rows) as { w: string | number; bucket: number }[];
    expect(list.map((r) => [Number(r.w), r.bucket])).toEqual(waits.map((w) => [w, waitBucket(w)]));
  });

  it('shows zeros and no percentiles for a range without usage', async () => {
    const d = await centreDashboard(db, { from: '2025-06-01', to: '2025-06-01' });
    expect(d.totals).toMatchObject({ jobs: 0, gpuSeconds: 0, itKwhPerGpuHour: null });
    expect(d.wait).toEqual({ startedJobs: 0, p50Seconds: null, p90Seconds: null, meanSeconds: null });
    expect(d.topByGpuHours).toEqual([]);
    expect(d.partitions.every((p) => p.days.length === 1 && p.days[0]!.utilisation === 0)).toBe(true);
  });

  /** A refusal as the HTTP handler renders it (code, message per field), and as the page and CSV route render it. */
  async function refusal(promise: Promise<unknown>, locale: 'en' | 'de' = 'en') {
    try {
      await promise;
    } catch (error) {
      if (!(error instanceof TRPCError)) throw error;
      const shape = getErrorShape({ config: appRouter._def._config, error, type: 'query', path: 'centre.dashboard', input: undefined, ctx: createContextInner({ db, locale }) }) as {
        data: { fieldErrors?: Record<string, string> };
      };
      return { code: error.code, fields: shape.data.fieldErrors ?? {}, rendered: centreRefusal(error, locale) };
    }
    throw new Error('expected the call to be refused');
  }

  it('refuses an end before the start, a 50-year range and an unknown partition, naming the field', async () => {
    const backwards = await refusal(asStaff().centre.dashboard({ from: '2026-03-03', to: '2026-03-01' }));
    expect(backwards.code).toBe('BAD_REQUEST');
    expect(backwards.fields).toEqual({ to: 'The end date must be on or after the start date.' });
    expect(backwards.rendered).toEqual({ status: 400, message: 'to: The end date must be on or after the start date.', fieldErrors: { to: 'The end date must be on or after the start date.' } });

    const fifty = await refusal(asStaff().centre.dashboard({ from: '1990-01-01', to: '2040-01-01' }));
    expect(fifty.code).toBe('BAD_REQUEST');
    expect(fifty.fields).toEqual({ to: 'Choose a range of at most two years (731 days).' });

    const unknown = await refusal(asStaff().centre.dashboard({ from: FROM, to: TO, partition: 'a100' }));
    expect(unknown.code).toBe('BAD_REQUEST');
    expect(unknown.fields).toEqual({ partition: 'There is no partition a100. Choose one from the list.' });
    expect(unknown.rendered?.status).toBe(400);

    const badDay = await refusal(asStaff().centre.dashboard({ from: '2026-02-30', to: TO }));
    expect(badDay.code).toBe('BAD_REQUEST');
    expect(Object.keys(badDay.fields)).toEqual(['from']);

    // In German too, and the service refuses the same way when called directly.
    const german = await refusal(callerFor(db, { userId: staff.userId, locale: 'de' }).centre.dashboard({ from: '2026-03-03', to: '2026-03-01' }), 'de');
    expect(german.fields.to).toBe('Das Enddatum muss am oder nach dem Startdatum liegen.');
    expect(german.rendered?.fieldErrors.to).toBe('Das Enddatum muss am oder nach dem Startdatum liegen.');
    await expect(centreDashboard(db, { from: '1990-01-01', to: '2040-01-01' })).rejects.toMatchObject({ code: 'BAD_REQUEST', key: 'centre.error.rangeTooLong', field: 'to' });
  });

  it('is for staff only', async () => {
    const asTenant = await refusal(callerFor(db, { userId: beta.userId, orgId: beta.orgId }).centre.dashboard({ from: FROM, to: TO }));
    expect(asTenant.code).toBe('FORBIDDEN');
    expect(asTenant.rendered?.status).toBe(403);
    expect((await refusal(callerFor(db, { userId: alpha.userId }).centre.csv({ from: FROM, to: TO }))).code).toBe('FORBIDDEN');
    expect((await refusal(callerFor(db).centre.dashboard({ from: FROM, to: TO }))).code).toBe('UNAUTHORIZED');
  });

  it('exports the utilisation series and the tenants as CSV', async () => {
    const series = await asStaff().centre.csv({ from: FROM, to: TO });
    expect(series.filename).toBe('centre-2026-03-01-2026-03-03.csv');
    expect(series.body.startsWith(CSV_BOM)).toBe(true);
    const lines = series.body.slice(CSV_BOM.length).split('\r\n');
    expect(lines[0]).toBe('day,partition,gpu_hours,capacity_gpu_hours,utilisation_percent');
    expect(lines).toHaveLength(1 + 3 * 3 + 1); // header, 3 days × 3 partitions, final CRLF
    expect(lines[lines.length - 1]).toBe('');
    expect(lines[1]).toBe('2026-03-01,b200,0.00,1536.00,0.00');
    expect(lines[2]).toBe('2026-03-01,h100,1152.00,3072.00,37.50');
    expect(lines).toContain('2026-03-02,b200,1536.00,1536.00,100.00');
    expect(lines).toContain('2026-03-03,h100-ch,192.00,768.00,25.00');

    const tenants = await centreDashboardCsv(db, { from: FROM, to: TO }, 'tenants');
    expect(tenants.filename).toBe('centre-tenants-2026-03-01-2026-03-03.csv');
    expect(tenants.body.slice(CSV_BOM.length).split('\r\n')).toEqual([
      'tenant,kind,gpu_hours,jobs,it_kwh,facility_kwh,heat_reused_kwh,co2e_kg,cost_eur',
      'Alpha University,academic,2304.00,3,1300.000,1404.000,982.800,533.520,414.72',
      '"Beta, Compute GmbH",company,1920.00,4,1300.000,1364.000,746.800,185.520,8640.00',
      'Gamma AG,company,192.00,1,1200.000,1440.000,0.000,57.600,499.20',
      '',
    ]);
    const filtered = await centreDashboardCsv(db, { from: FROM, to: TO, partition: 'h100', tenantKind: 'company' });
    expect(filtered.body.slice(CSV_BOM.length).split('\r\n').slice(0, 2)).toEqual(['day,partition,gpu_hours,capacity_gpu_hours,utilisation_percent', '2026-03-01,h100,384.00,3072.00,12.50']);
  });

  it('serves the CSV download to staff and refuses others with a plain 403 or 400', async () => {
    const url = (query: string) => new Request(`http://portal.test/api/centre/csv?${query}`);
    requestContext.current = createContextInner({ db, userId: staff.userId, locale: 'en' });
    const ok = await downloadCsv(url(`from=${FROM}&to=${TO}&partition=&tenantKind=`));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(ok.headers.get('content-disposition')).toBe('attachment; filename="centre-2026-03-01-2026-03-03.csv"');
    // UTF-8 with a byte-order mark (Response.text() drops it when decoding).
    expect([...new Uint8Array(await ok.clone().arrayBuffer()).slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const body = await ok.text();
    expect(body.split('\r\n')[0]).toBe('day,partition,gpu_hours,capacity_gpu_hours,utilisation_percent');
    expect(body).toContain('2026-03-03,h100,1536.00,3072.00,50.00\r\n');

    const tenantsCsv = await downloadCsv(url(`from=${FROM}&to=${TO}&table=tenants`));
    expect(tenantsCsv.headers.get('content-disposition')).toBe('attachment; filename="centre-tenants-2026-03-01-2026-03-03.csv"');

    for (const [query, field] of [
      [`from=${TO}&to=${FROM}`, 'to: The end date must be on or after the start date.'],
      ['from=1990-01-01&to=2040-01-01', 'to: Choose a range of at most two years (731 days).'],
      [`from=${FROM}&to=${TO}&partition=a100`, 'There is no partition a100. Choose one from the list.'],
      [`from=${FROM}&to=${TO}&tenantKind=charity`, 'tenantKind: Choose one of: academic, company.'],
      ['from=yesterday', 'from: This value is not valid.'],
      [`from=${FROM}&to=${TO}&table=jobs`, 'table: Choose one of: partitions, tenants.'],
    ] as const) {
      const refused = await downloadCsv(url(query));
      expect(refused.status, query).toBe(400);
      expect(refused.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect((await refused.text()).trim(), query).toBe(field);
    }

    requestContext.current = createContextInner({ db, userId: beta.userId, activeOrgId: beta.orgId, locale: 'en' });
    const forbidden = await downloadCsv(url(`from=${FROM}&to=${TO}`));
    expect(forbidden.status).toBe(403);
    expect((await forbidden.text()).trim()).toBe('Only centre staff may do this.');
    // The staff check comes before validation: others learn nothing from bad input either.
    expect((await downloadCsv(url('from=1990-01-01&to=2040-01-01'))).status).toBe(403);

    requestContext.current = createContextInner({ db, userId: null, locale: 'en' });
    expect((await downloadCsv(url(`from=${FROM}&to=${TO}`))).status).toBe(401);
  });
});
